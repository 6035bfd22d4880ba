/**
 * A job's side of adaptive concurrency: how many of its calls may be in flight now (its
 * `concurrency`, or less while the limiter of its credential and model holds a limit), learned from
 * the ProviderLimiter when the job starts, when the provider throttles one of its calls, and once
 * per round of successes while a limit holds. The value is kept in the coordinator's meta
 * (`effective`), so a restart resumes at it. A limiter that cannot be reached changes nothing:
 * the job goes on at what it had. A job that starts paced (a model the tenant has not used
 * lately: src/engine/aimd.ts) asks again when the pacing may end — RAMP_MS after its start, and
 * not before the paced round's first report, so a throttle that has not been told yet (a busy
 * runtime handles reports late) is never outrun by the lift — and dispatches the room it gets;
 * if that timer is lost (a restart), its first round of successes asks instead.
 */
import { RAMP_MS } from "../../src/engine/aimd";
import { isRateLimited, type AttemptOutcome } from "../../src/engine/retry-policy";
import type { JobSpecBase as JobSpec } from "../../src/engine/types";
import { providerLimiter } from "../../src/objects";
import type { EventData } from "../../src/schemas/events";
import type { CoordinatorStore } from "./store";

/** The job as its limiter counts it: shares are per tenant, then per job. */
const who = (spec: JobSpec) => ({ id: spec.jobId, tenant: spec.tenantId });

/** Why the job's calls in flight changed: the reasons the CONCURRENCY_CHANGED schema lists. */
export type ConcurrencyReason = EventData<"CONCURRENCY_CHANGED">["reason"];

/** What the link needs of its job: the calls it has in flight, and a dispatch when room opens outside a report. */
export interface ConcurrencyJob {
  inFlight(): number;
  roomOpened(): void;
}

export class ConcurrencyLink {
  #effective: number | null; // null: the job's own concurrency
  #successes = 0;
  /** A paced start: `waiting` for RAMP_MS; `due`: RAMP_MS passed, the paced round has not reported yet. */
  #pacing: "none" | "waiting" | "due" = "none";
  #reported = false; // a report came since the paced start

  constructor(
    private readonly env: Env,
    private readonly store: CoordinatorStore,
    private readonly onChange: (cap: number, reason: ConcurrencyReason) => void,
    private readonly job: ConcurrencyJob,
  ) {
    this.#effective = store.getMeta("effective") ?? null;
  }

  /** The calls the job may have in flight now. */
  cap(spec: JobSpec): number {
    return Math.min(spec.concurrency, this.#effective ?? Infinity);
  }

  async join(spec: JobSpec, inFlight: number): Promise<void> {
    await this.#ask(spec, "shared", (l) => l.join(who(spec), spec.concurrency, inFlight));
    if (this.cap(spec) >= spec.concurrency) return;
    this.#pacing = "waiting";
    this.#reported = false;
    setTimeout(() => {
      if (this.#pacing !== "waiting") return; // a throttle decided already
      if (!this.#reported) {
        this.#pacing = "due"; // the first report asks
        return;
      }
      this.#pacing = "none";
      void this.#askAgain(spec);
    }, RAMP_MS + 10);
  }

  /** After a paced start: the limiter lifts the pacing if no throttle came meanwhile. */
  async #askAgain(spec: JobSpec): Promise<void> {
    const before = this.cap(spec);
    await this.#ask(spec, "recovered", (l) => l.join(who(spec), spec.concurrency, this.job.inFlight()));
    if (this.cap(spec) > before) this.job.roomOpened();
  }

  /**
   * After an attempt's report (`sentAt`: when it was dispatched): a throttle cuts, a round of
   * successes while limited grows. Null when the limiter need not be asked (nearly every report),
   * so the report goes on in the same turn.
   */
  observe(spec: JobSpec, outcome: AttemptOutcome, inFlight: number, sentAt: number): Promise<void> | null {
    const throttle = isRateLimited(outcome);
    if (this.#pacing !== "none") {
      this.#reported = true;
      if (throttle)
        this.#pacing = "none"; // the throttle's cut ends the pacing (the limiter's window decides)
      else if (this.#pacing === "due") {
        this.#pacing = "none";
        return this.#ask(spec, "recovered", (l) => l.join(who(spec), spec.concurrency, inFlight));
      }
    }
    if (throttle) {
      const ok = this.#successes;
      this.#successes = 0;
      return this.#ask(spec, "throttled", (l) => l.throttled(who(spec), spec.concurrency, inFlight + 1, sentAt, ok));
    }
    if (outcome.kind !== "success" || this.#effective === null) return null;
    if (++this.#successes < this.#effective) return null;
    const count = this.#successes;
    this.#successes = 0;
    return this.#ask(spec, "recovered", (l) => l.succeeded(who(spec), spec.concurrency, inFlight, count));
  }

  leave(spec: JobSpec): void {
    this.#limiter(spec)
      .leave(spec.jobId)
      .catch((err: unknown) => console.error("could not leave the provider limiter", err));
  }

  /** The limiter of the job's credential and model (its credential is read as the job joins its rate pacer, before this link joins). */
  #limiter(spec: JobSpec) {
    return providerLimiter(this.env, this.store.getMeta("credential") ?? `tenant:${spec.tenantId}`, spec.model);
  }

  async #ask(spec: JobSpec, reason: ConcurrencyReason, call: (limiter: ReturnType<typeof providerLimiter>) => Promise<number>): Promise<void> {
    let share: number;
    try {
      share = await call(this.#limiter(spec));
    } catch (err) {
      console.error("the provider limiter could not be reached; concurrency unchanged", err);
      return;
    }
    const next = share >= spec.concurrency ? null : share;
    if (next === this.#effective) return;
    const before = this.cap(spec);
    this.#effective = next;
    this.store.setMeta("effective", next);
    // A throttle's report can lift the limit too: the limiter found the cuts did not help (src/engine/aimd.ts).
    if (this.cap(spec) !== before) this.onChange(this.cap(spec), reason === "throttled" && this.cap(spec) > before ? "recovered" : reason);
  }
}
