/**
 * Progress on stderr: a redrawn bar when stderr is a terminal, plain periodic lines otherwise
 * (logs, CI), with done/total, failures, rate and ETA, the calls at once when the provider's
 * limit changed them (CONCURRENCY_CHANGED: a line at once, a throttle is news), and the rate the
 * job is paced at (PACING_CHANGED: why a job goes no faster).
 */
import type { EventHandlers, PacingChangedEvent } from "./types.js";

export interface ProgressState {
  done: number;
  failed: number;
  total: number;
  /** The job's last CONCURRENCY_CHANGED: the calls it may have in flight, and why (a provider's pushback shows). */
  concurrency?: { calls: number; reason: string };
  /** The job's last PACING_CHANGED, as words (absent: nothing paces it). */
  pacing?: string;
}

const PLAIN_EVERY_MS = 2_000;
const BAR_WIDTH = 30;

function eta(state: ProgressState, elapsedMs: number): string {
  if (state.done === 0) return "?";
  const secs = ((state.total - state.done) * elapsedMs) / state.done / 1000;
  return secs < 90 ? `${Math.ceil(secs)}s` : `${Math.ceil(secs / 60)}m`;
}

export function describe(state: ProgressState, elapsedMs: number): string {
  const rate = state.done / Math.max(elapsedMs / 1000, 0.001);
  const calls = state.concurrency ? `, ${state.concurrency.calls} calls at once (${state.concurrency.reason})` : "";
  const paced = state.pacing ? `, paced at ${state.pacing}` : "";
  return `${state.done}/${state.total} done, ${state.failed} failed, ${rate.toFixed(1)}/s, ETA ${eta(state, elapsedMs)}${calls}${paced}`;
}

export class Progress {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #started = Date.now();
  #lastPlain = 0;
  #lastLine = ""; // a plain line is not written twice in a row (the final forced one after the last result's)

  constructor(out: NodeJS.WriteStream = process.stderr) {
    this.#out = out;
    this.#tty = out.isTTY === true;
  }

  update(state: ProgressState, force = false): void {
    const elapsed = Date.now() - this.#started;
    if (this.#tty) {
      const filled = state.total === 0 ? BAR_WIDTH : Math.round((state.done / state.total) * BAR_WIDTH);
      this.#out.write(`\r[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${describe(state, elapsed)}\u001b[K`);
    } else if (force || elapsed - this.#lastPlain >= PLAIN_EVERY_MS) {
      const line = `progress: ${describe(state, elapsed)}\n`;
      // The same counts, just later (a rate or ETA moved): not news.
      if (line === this.#lastLine || line.replace(/, [\d.]+\/s, ETA \S+/, "") === this.#lastLine.replace(/, [\d.]+\/s, ETA \S+/, "")) return;
      this.#lastPlain = elapsed;
      this.#lastLine = line;
      this.#out.write(line);
    }
  }

  finish(): void {
    if (this.#tty) this.#out.write("\n");
  }
}

/** Follows a job's CONCURRENCY_CHANGED events into its progress, with a line at once. */
export function trackConcurrency(
  job: { on(handlers: Pick<EventHandlers<unknown>, "CONCURRENCY_CHANGED">): unknown },
  state: ProgressState,
  progress: Progress,
): void {
  job.on({
    CONCURRENCY_CHANGED: (e) => {
      state.concurrency = { calls: e.effective_concurrency, reason: e.reason };
      progress.update(state, true);
    },
  });
}

const PACED_BY: Record<string, string> = {
  job: "the job's rate_limit",
  declared: "declared limits",
  headers: "the provider's headers",
  adaptive: "adaptive concurrency",
};

/** A job's pacing in words: its model's limits and where they come from (undefined: nothing paces it). */
export function pacingWords(pacing: PacingChangedEvent["pacing"]): string | undefined {
  if (pacing.source === null) return undefined;
  const limits = [
    pacing.rpm !== null ? `${pacing.rpm.toLocaleString("en-US")} requests/min` : null,
    pacing.tpm !== null ? `${pacing.tpm.toLocaleString("en-US")} tokens/min` : null,
  ]
    .filter(Boolean)
    .join(" · ");
  const share = pacing.share !== null && pacing.share < 1 ? `, ${Math.round(pacing.share * 100)} % of it` : "";
  return `${limits || "no rate limit known"} (${PACED_BY[pacing.source] ?? pacing.source}${share})`;
}

/** Follows a job's PACING_CHANGED events into its progress, with a line at once. */
export function trackPacing(job: { on(handlers: Pick<EventHandlers<unknown>, "PACING_CHANGED">): unknown }, state: ProgressState, progress: Progress): void {
  job.on({
    PACING_CHANGED: (e) => {
      state.pacing = pacingWords(e.pacing);
      progress.update(state, true);
    },
  });
}

/** Follows a job's provider batches (execution mode batch or auto) with a line for each as it is sent and as it ends. */
export function trackBatches(
  job: { on(handlers: Pick<EventHandlers<unknown>, "BATCH_SUBMITTED" | "BATCH_ENDED">): unknown },
  out: NodeJS.WritableStream = process.stderr,
): void {
  job.on({
    BATCH_SUBMITTED: (e) =>
      out.write(
        `batch ${e.batch.id}: sent to the provider (${e.batch.provider_batch_id}), ${e.batch.requests} request${e.batch.requests === 1 ? "" : "s"} of stage ${e.batch.stage}\n`,
      ),
    BATCH_ENDED: (e) => out.write(`batch ${e.batch.id}: ${e.batch.status}, ${e.batch.completed} completed, ${e.batch.failed} failed\n`),
  });
}

/** The job's dollars for its summary line (null: a model has no price; absent: a server before v3). */
export function costText(cost: number | null | undefined): string {
  if (cost === undefined) return "";
  return cost === null ? ", cost unknown (a model has no price)" : `, cost $${cost.toFixed(cost < 1 ? 6 : 2)}`;
}
