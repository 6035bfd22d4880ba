/**
 * The coordinator's copy of its job in D1: finished results from the outbox, in batches, and the
 * job's progress with each batch. `schedule()` coalesces the writes of a burst of completions
 * (at most FLUSH_DELAY_MS stale); `flush()` writes now. Flushes never overlap, and a row leaves
 * the outbox only once D1 has it.
 */
import { writeJobProgress, type JobProgress } from "../../src/db/jobs";
import type { CoordinatorStore } from "./store";

const FLUSH_DELAY_MS = 100; // results are copied to D1 in batches at most this stale
const FLUSH_BATCH = 50; // rows per D1 batch

export class D1Mirror {
  readonly #db: D1Database;
  readonly #store: CoordinatorStore;
  readonly #progress: () => { jobId: string; progress: JobProgress };
  #timer: ReturnType<typeof setTimeout> | null = null;
  #flushing: Promise<void> = Promise.resolve();

  constructor(db: D1Database, store: CoordinatorStore, progress: () => { jobId: string; progress: JobProgress }) {
    this.#db = db;
    this.#store = store;
    this.#progress = progress;
  }

  #stopped = false;

  /** The job is being deleted: no flush starts again; resolves once the one under way (if any) is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#flushing.catch(() => undefined);
  }

  schedule(): void {
    if (this.#timer !== null || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.flush().catch((err: unknown) => console.error("flush failed; the alarm retries", err));
    }, FLUSH_DELAY_MS);
  }

  /** Writes now; a write scheduled before it is folded in (else it would land later and rewrite the row, e.g. `completed_at` after a job's end). */
  flush(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const run = this.#flushing.catch(() => undefined).then(() => this.#flushOnce());
    this.#flushing = run;
    return run;
  }

  async #flushOnce(): Promise<void> {
    if (this.#stopped) return;
    do {
      const rows = this.#store.outbox.next(FLUSH_BATCH);
      const { jobId, progress } = this.#progress();
      const drops = this.#store.getMeta("d1_drop_stages") ?? [];
      await writeJobProgress(this.#db, jobId, progress, rows, drops);
      this.#store.outbox.remove(rows);
      if (drops.length > 0) this.#store.setMeta("d1_drop_stages", null);
    } while (this.#store.outbox.size() > 0);
  }
}
