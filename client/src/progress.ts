/**
 * Progress on stderr: a redrawn bar when stderr is a terminal, plain periodic lines otherwise
 * (logs, CI), with done/total, failures, rate and ETA, and the calls at once when the provider's
 * limit changed them (CONCURRENCY_CHANGED: a line at once, a throttle is news).
 */
import type { EventHandlers } from "./types.js";

export interface ProgressState {
  done: number;
  failed: number;
  total: number;
  /** The job's last CONCURRENCY_CHANGED: the calls it may have in flight, and why (a provider's pushback shows). */
  concurrency?: { calls: number; reason: string };
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
  return `${state.done}/${state.total} done, ${state.failed} failed, ${rate.toFixed(1)}/s, ETA ${eta(state, elapsedMs)}${calls}`;
}

export class Progress {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #started = Date.now();
  #lastPlain = 0;

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
      this.#lastPlain = elapsed;
      this.#out.write(`progress: ${describe(state, elapsed)}\n`);
    }
  }

  finish(): void {
    if (this.#tty) this.#out.write("\n");
  }
}

/** Follows a job's CONCURRENCY_CHANGED events into its progress, with a line at once. */
export function trackConcurrency(job: { on(handlers: Pick<EventHandlers<unknown>, "CONCURRENCY_CHANGED">): unknown }, state: ProgressState, progress: Progress): void {
  job.on({
    CONCURRENCY_CHANGED: (e) => {
      state.concurrency = { calls: e.effective_concurrency, reason: e.reason };
      progress.update(state, true);
    },
  });
}

/** Follows a job's provider batches (execution mode batch or auto) with a line for each as it is sent and as it ends. */
export function trackBatches(job: { on(handlers: Pick<EventHandlers<unknown>, "BATCH_SUBMITTED" | "BATCH_ENDED">): unknown }, out: NodeJS.WritableStream = process.stderr): void {
  job.on({
    BATCH_SUBMITTED: (e) => out.write(`batch ${e.batch.id}: sent to the provider (${e.batch.provider_batch_id}), ${e.batch.requests} requests of stage ${e.batch.stage}\n`),
    BATCH_ENDED: (e) => out.write(`batch ${e.batch.id}: ${e.batch.status}, ${e.batch.completed} completed, ${e.batch.failed} failed\n`),
  });
}

/** The job's dollars for its summary line (null: a model has no price; absent: a server before v3). */
export function costText(cost: number | null | undefined): string {
  if (cost === undefined) return "";
  return cost === null ? ", cost unknown (a model has no price)" : `, cost $${cost.toFixed(cost < 1 ? 6 : 2)}`;
}
