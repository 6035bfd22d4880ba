/**
 * RatePacer: one per (credential, model), named `<credential id>:<model>` — the deployment's key
 * is one credential shared by every tenant using it, a tenant's own key is private to it. It
 * holds the provider's rate limits as buckets (src/engine/pacing.ts) and leases calls to the
 * jobs that use it: a job asks for the calls it could start, with what each costs, and gets as
 * many as fit now (its fair share while others wait) or when to ask again. Each ask carries what
 * the job learned since its last one — the latest answer's rate-limit headers, a retry-after, and
 * the tokens its calls reserved beyond their usage — so a job talks to it a few times a second
 * at most, not once per call. Its state is in its storage: a restart keeps the limits.
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
}

export interface PacerAnswer {
  lease: Lease;
  paces: boolean;
  limits: RateLimit;
  source: LimitSource | null;
  /** Nothing is known of this credential and model yet: a job sends one call first, and the rest once it is answered (paced by its headers, if it has any). */
  fresh: boolean;
}

export class RatePacer extends DurableObject<Env> {
  #state: PacerState | null = null;

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
    return { lease: answer.lease, paces: paces(this.#state), limits: limitsOf(this.#state), source: this.#state.source, fresh };
  }

  async leave(jobId: string): Promise<void> {
    this.#state = leave(await this.#load(), jobId);
    await this.ctx.storage.put("pacer", this.#state);
  }
}
