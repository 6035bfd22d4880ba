/**
 * The slots' running tasks as the store last wrote them (./store.ts): a current dispatch's
 * report, claim or hand-over reads its task here instead of SQL (a task read costs ~15 µs of a
 * running job's CPU, once per attempt: BENCHMARKS.md). Only the store fills it, with the row its
 * `saveTask` wrote for a task that now runs on a slot (built as `markDone` builds its row, not
 * read back); every other write that can change a running task drops it: the task's next
 * transition or its end, a reset, the release of every running task, a dropped stage, a
 * rolled-back transaction. A write whose `WHERE` names another state (ready, due, child-ended)
 * cannot change a running row, and an insert makes no running row.
 *
 * Bounded by the slots: one row per running call task (a job's concurrency, ≤ MAX_ROWS); a
 * batch's lines and a sub-session's tasks (no slot) are read from SQL as before.
 */
import type { TaskRow } from "./store-rows";

const MAX_ROWS = 1_024;

export class RunningRows {
  readonly #rows = new Map<string, TaskRow>();

  get(stage: string, idx: number): TaskRow | undefined {
    return this.#rows.get(key(stage, idx));
  }

  /**
   * `written`: the row a write of `read` left, kept while it runs on a slot — only when `read` is
   * surely the task as it was: the row kept here, or (none kept) a task not yet running, read for
   * its dispatch. A running task is kept from its dispatch on, so a row read before a later write
   * of it is not the one kept; and one not kept (dropped by a rolled-back transaction, a release)
   * is read from SQL until its next dispatch. What was written from any other row is dropped.
   */
  wrote(read: TaskRow, written: TaskRow): void {
    const k = key(written.stage, written.idx);
    const kept = this.#rows.get(k);
    const current = kept === undefined ? read.state !== "running" : kept === read;
    if (written.state !== "running" || written.slot === null || !current) {
      this.#rows.delete(k);
      return;
    }
    if (kept === undefined && this.#rows.size >= MAX_ROWS) this.#rows.clear(); // never with a job's slots: a bound, not a policy
    this.#rows.set(k, written);
  }

  drop(stage: string, idx: number): void {
    this.#rows.delete(key(stage, idx));
  }

  clear(): void {
    this.#rows.clear();
  }
}

/** The index first: a stage's name may hold any character, an index none of ":". */
const key = (stage: string, idx: number) => `${idx}:${stage}`;
