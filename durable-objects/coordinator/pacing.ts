/**
 * A job's side of pacing by the provider's rate limits (src/engine/pacing.ts): the calls it may
 * start now are the ones its RatePacer (per credential and model) leased it. While the pacer knows
 * no limit, nothing is paced and the job asks nothing more after it joins; the first answer that
 * carries rate-limit headers turns pacing on. A dispatch that finds no leased call left asks for
 * as many as it could start, then waits — its tasks stay pending and hold no slot — for the
 * lease or the pacer's "ask again after". Each ask carries the news of the reports since the last
 * one: the latest headers, a retry-after, the tokens reserved beyond the usage. A pacer that
 * cannot be reached paces nothing (the job goes on as without limits, AIMD still applies).
 * The pacing the API shows (`pacing` on the job, PACING_CHANGED) is kept in the meta.
 */
import {
  charge,
  declare,
  EMPTY,
  NO_PACING,
  PACER_ASKS_LOG,
  room,
  type CallCost,
  type PacerState,
  type PacingView,
  type RateLimit,
  type RateObservation,
} from "../../src/engine/pacing";
import { isRateLimited, isThrottle, type AttemptOutcome } from "../../src/engine/retry-policy";
import type { JobSpecBase as JobSpec } from "../../src/engine/types";
import { ratePacer } from "../../src/objects";
import { splitDeploymentKey } from "../../src/llm/credential";
import type { PacerAnswer, PacerNews } from "../rate-pacer";

/** What the link needs of its job. */
export interface PacedJob {
  /** The next call's prompt estimate and `max_tokens` (null: nothing pending). */
  nextCall(): { prompt: number; maxTokens: number | null } | null;
  /** The lease came, or the wait ended: dispatch. */
  roomOpened(): void;
  /** The calls in flight now. */
  inFlight(): number;
}

/** Whether the provider answered the call (a timeout, a crash or a network error says nothing of the key). */
const answered = (outcome: AttemptOutcome): boolean =>
  (outcome.kind === "success" && !outcome.cached) || outcome.kind === "invalid" || outcome.kind === "permanent" || isThrottle(outcome);

/** What a call costs when nothing is known of it (or nothing pending): a request, no token. */
const NO_COST: Readonly<CallCost> = Object.freeze({ tokens: 0, input: 0, output: 0 });

/** Reports before the provider's count of the prompts corrects their estimate. */
const PROMPT_RATIO_AFTER = 3;

/** How long a job's calls go out unpaced after its pacer could not be asked. */
const UNPACED_AFTER_FAILURE_MS = 5_000;

/** How long the other calls of a job wait for a probe's answer at most. */
export const PROBE_WAIT_MS = 5_000;

/** The providers whose answers carry rate-limit headers: a job on a key of theirs that nothing is known of probes first. */
const sendsHeaders = (model: string): boolean => model.startsWith("openai/") || model.startsWith("anthropic/");

/** What a link keeps across a restart: the job's own model's in the job's meta, another model's beside it (./pacings.ts). */
export interface LinkMeta {
  credential: string | null;
  paces: boolean;
  view: PacingView;
}

export interface LinkStore {
  get(): LinkMeta;
  set(part: Partial<LinkMeta>): void;
}

/** The job's own `rate_limit`, kept by the job (no round trip) and shared by its links: it only lowers the pace of all its calls. */
export class OwnLimit {
  #state: PacerState | null = null;

  /** How many calls of `cost` fit it now, and how long until one does. */
  room(spec: JobSpec, cost: CallCost): { fits: number; waitMs: number } {
    if (!spec.rateLimit) return { fits: Infinity, waitMs: 0 };
    const now = Date.now();
    const answer = room(this.#of(spec, now), cost, now);
    this.#state = answer.state;
    return answer;
  }

  started(spec: JobSpec, cost: CallCost): void {
    if (spec.rateLimit) this.#state = charge(this.#of(spec, Date.now()), cost, Date.now());
  }

  /** Made at its first use. */
  #of(spec: JobSpec, now: number): PacerState {
    return (this.#state ??= declare(EMPTY, spec.rateLimit ?? null, now));
  }
}

export class PacingLink {
  #credential: string | null;
  #paces: boolean;
  #granted = 0; // leased calls not started yet
  #asking = false;
  #missed = false; // a dispatch wanted calls while an ask was under way: it asks again when the answer comes
  #timer: ReturnType<typeof setTimeout> | null = null;
  #seen: RateObservation | null = null;
  #unused: CallCost = { ...NO_COST };
  #declared: RateLimit | null | undefined = undefined; // sent with the first ask
  #answered = false; // news for the next ask: a call was answered (the pacer is no longer fresh)
  #probed = false; // the job probed (once: never again); until the pacer hears of an answer, `#told` is false
  #told = false;
  #unpacedUntil = 0; // the pacer could not be asked: the job's calls go out unpaced until then
  #output = { calls: 0, tokens: 0 }; // the output tokens of the calls reported so far: what the next one is expected to write
  /** The prompts as estimated (chars/4) for the leases asked, and as the provider counted them in the reports' usage: their ratio corrects the estimate. */
  #prompts = { estimated: { calls: 0, tokens: 0 }, counted: { calls: 0, tokens: 0 } };
  /** A credential and model nothing is known of: one call goes first (`ready`), the others wait for its answer (`sent`). */
  #probe: "ready" | "sent" | null = null;
  /** Since when the job has wanted calls and the pacer granted none (null: it granted one since, or nothing was wanted): counted toward max_wait_secs. */
  #starvedSince: number | null = null;
  /** Until when the credential's circuit for the model is open, as the pacer last said (any job's news: ./circuits.ts). */
  #sharedOpenUntil = 0;
  /** The job's own circuit changed: news for the next ask. */
  #circuitNews: { openUntil: number } | null = null;
  /** The round trips to the pacer since this object started (said in a log line when the job leaves: the contract asks how many a second). */
  #asks = { count: 0, since: 0 };

  constructor(
    private readonly env: Env,
    private readonly store: LinkStore,
    private readonly job: PacedJob,
    private readonly onChange: (view: PacingView) => void,
    /** The model whose calls it paces (the RatePacer is per credential and model). */
    readonly model: string,
    private readonly own: OwnLimit,
  ) {
    const kept = store.get();
    this.#credential = kept.credential;
    this.#paces = kept.paces;
  }

  /** The job starts: which credential its calls use (and the tenant's declared limits for the model), and whether the pacer paces. */
  async join(spec: JobSpec, credentialId: string, declared: RateLimit | null): Promise<void> {
    if (spec.rateLimit) this.#show(spec, NO_PACING);
    this.#credential = credentialId;
    this.store.set({ credential: credentialId });
    this.#declared = declared;
    await this.#ask(spec, 0);
  }

  /** The job's circuit for this credential and model opened (until then) or closed (0): the pacer tells the other jobs. */
  reportCircuit(spec: JobSpec, openUntil: number): void {
    this.#circuitNews = { openUntil };
    if (!this.#asking) void this.#ask(spec, 0);
  }

  /** Until when the shared circuit is open (0: closed, as far as the pacer last said). */
  sharedOpenUntil(): number {
    return this.#sharedOpenUntil;
  }

  /** How many calls may start now (Infinity: not paced): what the pacer leased, within the job's own limit. */
  room(spec: JobSpec): number {
    const probe = this.#probe === "ready" ? 1 : this.#probe === "sent" ? 0 : Infinity;
    const leased = this.#paces && Date.now() >= this.#unpacedUntil ? this.#granted : probe;
    return Math.min(leased, this.#ownRoom(spec).fits);
  }

  /** A call started: on a leased call, and within the job's own limit. */
  started(spec: JobSpec): void {
    if (this.#probe === "ready") {
      this.#probe = "sent";
      // A probe that takes long (a long answer) holds the others back no longer than PROBE_WAIT_MS.
      setTimeout(() => {
        if (this.#probe !== "sent") return;
        this.#probe = null;
        this.job.roomOpened();
      }, PROBE_WAIT_MS);
    }
    if (this.#paces && Date.now() >= this.#unpacedUntil) this.#granted = Math.max(0, this.#granted - 1);
    this.#starvedSince = null;
    this.own.started(spec, this.#ownCost(spec));
  }

  /**
   * How long the job has wanted calls of this model and the shared pacer granted none (a
   * provider's retry-after blocking it, other jobs taking every lease): the waiting tasks count it
   * toward the job's max wait (0: not starved).
   */
  starvedFor(now: number): number {
    return this.#starvedSince === null ? 0 : now - this.#starvedSince;
  }

  /** The dispatch had `calls` to start that found no room: wait for the job's own limit, or ask the pacer (once at a time). */
  want(spec: JobSpec, calls: number): void {
    if (calls <= 0 || this.#timer) return;
    const own = this.#ownRoom(spec);
    if (own.fits < 1) return this.#wait(own.waitMs);
    if (!this.#paces || this.#granted >= 1 || Date.now() < this.#unpacedUntil) return;
    if (this.#asking) this.#missed = true;
    else void this.#ask(spec, Math.min(calls, own.fits));
  }

  #ownRoom(spec: JobSpec): { fits: number; waitMs: number } {
    return this.own.room(spec, this.#ownCost(spec));
  }

  /** A call's cost to the job's own limit: its tokens are estimated only when the limit counts them. */
  #ownCost(spec: JobSpec): CallCost {
    return spec.rateLimit?.tpm ? this.#cost() : NO_COST;
  }

  /**
   * What a call costs each limit: a request; OpenAI's tokens (the prompt and `max_tokens`, charged
   * at the request and never given back); Anthropic's input (the prompt) and output (charged as
   * written: reserved at what the job's calls wrote on average, settled to what this one wrote).
   */
  #cost(next = this.job.nextCall()): CallCost {
    if (!next) return NO_COST;
    const prompt = Math.ceil(next.prompt * this.#promptRatio());
    return { tokens: prompt + (next.maxTokens ?? 0), input: prompt, output: this.#expectedOutput() };
  }

  /**
   * How the provider counts the job's prompts against our estimate (ceil(characters / 4)): the
   * mean prompt tokens its answers reported over the mean estimate of the calls leased, once
   * PROMPT_RATIO_AFTER calls have reported, within [1/4, 4]. The pacer then reserves what the
   * provider will charge, not what the rule of thumb says (a key declared at 6,000 TPM met 429s
   * while the estimate was below the provider's count).
   */
  #promptRatio(): number {
    const { estimated, counted } = this.#prompts;
    if (counted.calls < PROMPT_RATIO_AFTER || estimated.calls === 0 || estimated.tokens === 0) return 1;
    const ratio = counted.tokens / counted.calls / (estimated.tokens / estimated.calls);
    return Math.min(4, Math.max(0.25, ratio));
  }

  #expectedOutput(): number {
    return this.#output.calls === 0 ? 0 : Math.round(this.#output.tokens / this.#output.calls);
  }

  /** A report: its headers, a retry-after, and the output it wrote against what was reserved are news for the next ask. */
  observe(spec: JobSpec, outcome: AttemptOutcome): void {
    if (this.#probe === "sent") this.#endProbe(outcome);
    if (this.#probed && !this.#told && answered(outcome)) {
      // The pacer hears that the key answers (with its headers, below, or without: then at once), so no job probes again.
      this.#told = true;
      this.#answered = true;
      if (!outcome.rate) void this.#ask(spec, 0);
    }
    if (outcome.rate) this.#seen = outcome.rate;
    if (isRateLimited(outcome) && outcome.retryAfterMs) {
      this.#seen = { ...this.#seen, retryAfterMs: outcome.retryAfterMs };
    }
    if (this.#paces && !("cached" in outcome && outcome.cached) && outcome.kind !== "crash") {
      const read = outcome.usage.input_tokens;
      if (read > 0) this.#prompts.counted = { calls: this.#prompts.counted.calls + 1, tokens: this.#prompts.counted.tokens + read };
      const written = outcome.usage.output_tokens;
      this.#unused.output += this.#expectedOutput() - written; // below zero: it wrote more than reserved
      this.#output = { calls: this.#output.calls + 1, tokens: this.#output.tokens + written };
    }
    // The first answer with rate-limit headers turns pacing on (a retry-after alone does not: it is
    // news for a pacer that paces); the calls still in flight were sent unleased.
    if (!this.#paces && outcome.rate && this.#credential) {
      this.#paces = true;
      this.#granted = 0;
      void this.#ask(spec, 0, { calls: this.job.inFlight(), cost: this.#cost() });
    }
  }

  /** The probe's report: with headers, pacing starts (below); without, the pacer hears it was answered and the others go out. */
  #endProbe(outcome: AttemptOutcome): void {
    if (outcome.kind === "success" && outcome.cached) {
      this.#probe = "ready"; // answered from the response cache: the provider was not asked, the next call probes
      return;
    }
    this.#probe = null;
    if (!outcome.rate) this.job.roomOpened(); // no headers: the others go out now (with headers, pacing starts below)
  }

  leave(spec: JobSpec): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.#credential) return;
    if (this.#asks.count > 0) {
      const secs = Math.max(0.001, (Date.now() - this.#asks.since) / 1000);
      console.log(
        JSON.stringify({
          message: PACER_ASKS_LOG,
          job_id: spec.jobId,
          model: this.model,
          asks: this.#asks.count,
          secs: Math.round(secs * 10) / 10,
          per_sec: Math.round((this.#asks.count / secs) * 10) / 10,
        }),
      );
    }
    ratePacer(this.env, this.#credential, this.#pacerModel())
      .leave(spec.jobId)
      .catch((err: unknown) => console.error("could not leave the rate pacer", err));
  }

  /** The model its RatePacer is named by: a pool deployment's key names its model (its credential is the deployment's own), so every job on that credential and model meets in one pacer. */
  #pacerModel(): string {
    return splitDeploymentKey(this.model).model;
  }

  /** Whether the model's calls are paced by known limits (then a throttle is the pacer's news, not adaptive concurrency's). */
  get paces(): boolean {
    return this.#paces;
  }

  /** The pacing the API shows (the job's progress adds `adaptive` when no rate limit is known but adaptive concurrency holds one). */
  view(): PacingView {
    return this.store.get().view;
  }

  async #ask(spec: JobSpec, calls: number, unleased: PacerNews["unleased"] = null): Promise<void> {
    if (!this.#credential) return;
    this.#asking = true;
    const next = calls > 0 ? this.job.nextCall() : null; // rendered once: the lease's cost and the estimate's sample
    const cost = this.#cost(next); // none: NO_COST
    if (next) this.#prompts.estimated = { calls: this.#prompts.estimated.calls + 1, tokens: this.#prompts.estimated.tokens + next.prompt };
    const news: PacerNews = { seen: this.#seen, unused: this.#unused, unleased, ...(this.#answered || this.#seen ? { answered: true } : {}) };
    this.#answered = false;
    if (this.#declared !== undefined) news.declared = this.#declared;
    if (this.#circuitNews) news.circuit = this.#circuitNews;
    this.#circuitNews = null;
    this.#seen = null;
    this.#unused = { ...NO_COST };
    if (this.#asks.count++ === 0) this.#asks.since = Date.now();
    let answer: PacerAnswer;
    try {
      answer = await ratePacer(this.env, this.#credential, this.#pacerModel()).ask({ jobId: spec.jobId, tenant: spec.tenantId, calls, cost }, news);
    } catch (err) {
      // Unpaced for a while (429s stay back-pressure); then the next dispatch asks the pacer again.
      console.error(`the rate pacer could not be reached; the job's calls go out unpaced for ${UNPACED_AFTER_FAILURE_MS / 1000} s`, err);
      this.#asking = false;
      this.#missed = false;
      this.#circuitNews ??= news.circuit ?? null; // told with the next ask
      this.#unpacedUntil = Date.now() + UNPACED_AFTER_FAILURE_MS;
      this.job.roomOpened();
      return;
    }
    this.#asking = false;
    this.#declared = undefined;
    this.#sharedOpenUntil = answer.circuitOpenUntil ?? 0; // a pacer from before circuits says none
    const missed = this.#missed;
    this.#missed = false;
    if (answer.paces !== this.#paces) {
      this.#paces = answer.paces;
      this.store.set({ paces: answer.paces });
    }
    this.#granted += answer.paces ? answer.lease.granted : 0;
    if (answer.paces && answer.lease.granted > 0) this.#starvedSince = null;
    else if (answer.paces && calls > 0) this.#starvedSince ??= Date.now();
    if (calls === 0 && unleased === null && answer.fresh && !answer.paces && this.#probe === null && !this.#probed && sendsHeaders(this.model)) {
      this.#probe = "ready"; // the job's join: one call first
      this.#probed = true;
    }
    this.#show(spec, answer.paces ? { ...answer.limits, source: answer.source, share: answer.lease.share } : NO_PACING);
    if (answer.paces && answer.lease.granted < Math.max(calls, missed ? 1 : 0)) this.#wait(answer.lease.waitMs);
    if (answer.lease.granted > 0 || (missed && !this.#timer)) this.job.roomOpened();
  }

  #wait(ms: number): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.job.roomOpened(); // the dispatch asks again if it still has calls to start
    }, ms);
  }

  /** The pacer's view within the job's own limit: `job` where that is the lower one. */
  #show(spec: JobSpec, shared: PacingView): void {
    const own = spec.rateLimit;
    const lower = (mine: number | null | undefined, theirs: number | null) => (mine && (theirs === null || mine < theirs) ? mine : null);
    const rpm = lower(own?.rpm, shared.rpm);
    const tpm = lower(own?.tpm, shared.tpm);
    const view: PacingView = rpm === null && tpm === null ? shared : { rpm: rpm ?? shared.rpm, tpm: tpm ?? shared.tpm, source: "job", share: shared.share };
    const before = this.view();
    if (before.rpm === view.rpm && before.tpm === view.tpm && before.source === view.source && before.share === view.share) return;
    this.store.set({ view });
    this.onChange(view);
  }
}
