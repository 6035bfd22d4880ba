/**
 * The timeouts of the calls a loop makes one after another (a call worker's invocation; the
 * requests of ./openai-chat.ts) on one timer, instead of a timer set and cleared for every call:
 * workerd's setTimeout and clearTimeout cost ~0.015 ms of CPU per call on S2 (BENCHMARKS.md,
 * "One timer, rows kept, microtasks"), where the calls' own deadlines are a number each. The timer
 * is set for the earliest deadline of the calls under way; when it fires, the calls past their
 * deadline are aborted and it is set again for the next one, if any — with a timeout far longer
 * than a call (60 s against a few hundred ms), it is set about once per timeout, not per call.
 *
 * `withCallTimer` runs a loop with a timer of its own (the loop's context: node's
 * AsyncLocalStorage), cleared when the loop ends; `callTimeout` outside such a loop sets a timer
 * for its one call, as before. Bounded: one timer per loop, one entry per call under way.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** A call's abort signal and its end (always called: the call no longer needs its timeout). */
export interface CallTimeout {
  signal: AbortSignal;
  release(): void;
}

interface Pending {
  controller: AbortController;
  deadline: number;
}

export class SharedCallTimer {
  readonly #pending = new Set<Pending>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #firesAt = Infinity;

  arm(timeoutMs: number): CallTimeout {
    const entry: Pending = { controller: new AbortController(), deadline: Date.now() + timeoutMs };
    this.#pending.add(entry);
    if (entry.deadline < this.#firesAt) this.#set(entry.deadline);
    return { signal: entry.controller.signal, release: () => this.#pending.delete(entry) };
  }

  /** The loop ended: no timer left behind. */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#firesAt = Infinity;
    this.#pending.clear();
  }

  #set(at: number): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#firesAt = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - Date.now()));
  }

  #fire(): void {
    this.#timer = null;
    this.#firesAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const entry of this.#pending) {
      if (entry.deadline <= now) {
        this.#pending.delete(entry);
        entry.controller.abort();
      } else next = Math.min(next, entry.deadline);
    }
    if (next < Infinity) this.#set(next);
  }
}

const loops = new AsyncLocalStorage<SharedCallTimer>();

/** Runs `loop` with one timer for its calls' timeouts, cleared when it ends. */
export async function withCallTimer<T>(loop: () => Promise<T>): Promise<T> {
  const timer = new SharedCallTimer();
  try {
    return await loops.run(timer, loop);
  } finally {
    timer.stop();
  }
}

/** A call's timeout: on its loop's timer, or (no loop) on a timer of its own. */
export function callTimeout(timeoutMs: number): CallTimeout {
  const shared = loops.getStore();
  if (shared) return shared.arm(timeoutMs);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  return { signal: controller.signal, release: () => clearTimeout(timer) };
}
