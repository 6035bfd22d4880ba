/**
 * RatePacer: one per (credential, model), named `<credential id>:<model>` — the deployment's key
 * is one credential shared by every tenant using it, a tenant's own key is private to it. It
 * holds the provider's rate limits as buckets (src/engine/pacing.ts) and leases calls to the
 * jobs that use it: a job asks for the calls it could start, with what each costs, and gets as
 * many as fit now (its fair share while others wait) or when to ask again. Each ask carries what
 * the job learned since its last one — the latest answer's rate-limit headers, a retry-after, and
 * the tokens its calls reserved beyond their usage — so a job talks to it a few times a second
 * at most, not once per call. Its state is in its storage: a restart keeps the limits.
 *
 * It also holds the circuit of its (credential, model) (contract v4, "Providers as they fail"):
 * a job whose own circuit opens on outage answers says so with its next ask (until when), one whose
 * call was answered again says it closed (for every tenant: the model answers); every ask's answer
 * carries until when the circuit is open, so the other jobs on the credential and model skip it
 * too, and a job that restarts learns of it at its first ask. Per tenant: a tenant's jobs hear of
 * their own tenant's opening; another tenant's (the deployment's shared key) only once
 * QUORUM tenants found it down — one tenant's inputs (a prompt the provider fails on) never hold
 * the others back. At most MAX_TENANTS_KEPT openings are kept (the latest ends).
 */
import { DurableObject } from "cloudflare:workers";
import {
  bounded,
  charge,
  declare,
  EMPTY,
  lease,
  leave,
  limitsOf,
  observe,
  paces,
  settle,
  type CallCost,
  type Lease,
  type LeaseAsk,
  type LimitSource,
  type PacerState,
  type RateLimit,
  type RateObservation,
} from "../src/engine/pacing";

/** What a job tells the pacer with an ask. */
export interface PacerNews {
  seen?: RateObservation | null;
  unused?: Partial<CallCost> | null;
  /** The tenant's declared limits for this model (its own credential): null when none. Sent when the job joins. */
  declared?: RateLimit | null;
  /** Calls the job has in flight that no lease covered (sent before the limits were known): taken from the buckets. */
  unleased?: { calls: number; cost: CallCost } | null;
  /** A call of the job was answered (with rate-limit headers or without). */
  answered?: boolean;
  /** The job's circuit for this credential and model changed: open until then (ms), or 0: closed by an answer. */
  circuit?: { openUntil: number };
}

export interface PacerAnswer {
  lease: Lease;
  paces: boolean;
  limits: RateLimit;
  source: LimitSource | null;
  /** Nothing is known of this credential and model yet: a job sends one call first, and the rest once it is answered (paced by its headers, if it has any). */
  fresh: boolean;
  /** Until when the credential's circuit for the model is open, as any job last said (0: closed). */
  circuitOpenUntil: number;
}

const MAX_OPEN_MS = 10 * 60_000; // a circuit a job says is open stays so at most this long from when it says it
const QUORUM = 2; // tenants that must have found it down before another tenant's jobs hear of it
const MAX_TENANTS_KEPT = 64;

export class RatePacer extends DurableObject<Env> {
  #state: PacerState | null = null;
  #openings: Record<string, number> | null = null; // the shared circuit: until when each tenant found it open (storage "circuit_openings")

  async #load(): Promise<PacerState> {
    // A state stored before the shared block was bounded may say days: bounded once, as it loads.
    this.#state ??= bounded((await this.ctx.storage.get<PacerState>("pacer")) ?? EMPTY, Date.now());
    return this.#state;
  }

  async ask(ask: LeaseAsk, news: PacerNews): Promise<PacerAnswer> {
    const now = Date.now();
    let state = await this.#load();
    if (news.declared !== undefined) state = declare(state, news.declared, now);
    if (news.seen) state = observe(state, news.seen, now);
    if (news.unused) state = settle(state, news.unused);
    if (news.unleased) state = charge(state, news.unleased.cost, now, news.unleased.calls);
    if (news.answered && !state.heard) state = { ...state, heard: true };
    const answer = paces(state) ? lease(state, ask, now) : { state, lease: { granted: ask.calls, waitMs: 0, share: 1 } };
    this.#state = answer.state;
    void this.ctx.storage.put("pacer", this.#state);
    const fresh = !paces(this.#state) && !this.#state.heard;
    const circuitOpenUntil = await this.#circuit(ask.tenant, news.circuit, now);
    return { lease: answer.lease, paces: paces(this.#state), limits: limitsOf(this.#state), source: this.#state.source, fresh, circuitOpenUntil };
  }

  /** The shared circuit after a job's news of its own (opened: until then, bounded; closed: for all), as `tenant` sees it. */
  async #circuit(tenant: string, news: PacerNews["circuit"], now: number): Promise<number> {
    let openings = (this.#openings ??= (await this.ctx.storage.get<Record<string, number>>("circuit_openings")) ?? {});
    if (news) {
      const told = Math.min(Math.max(0, news.openUntil), now + MAX_OPEN_MS);
      openings = told === 0 ? {} : { ...openings, [tenant]: Math.max(openings[tenant] ?? 0, told) };
      // The open ones, the latest ending first, at most MAX_TENANTS_KEPT.
      const kept = Object.entries(openings)
        .filter(([, until]) => until > now)
        .sort((x, y) => y[1] - x[1])
        .slice(0, MAX_TENANTS_KEPT);
      this.#openings = openings = Object.fromEntries(kept);
      void this.ctx.storage.put("circuit_openings", openings);
    }
    const own = openings[tenant] ?? 0;
    if (own > now) return own;
    const others = Object.values(openings).filter((until) => until > now);
    return others.length >= QUORUM ? Math.max(...others) : 0;
  }

  async leave(jobId: string): Promise<void> {
    this.#state = leave(await this.#load(), jobId);
    await this.ctx.storage.put("pacer", this.#state);
  }
}
