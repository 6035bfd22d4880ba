/**
 * The next pending tasks in dispatch order, read ahead (./store.ts): a report's next dispatch
 * takes the first of them instead of reading the tasks table for each task (a read with its
 * rows ~13 µs per item on S2: BENCHMARKS.md). The store reads READ_AHEAD at a time; a task that
 * leaves `pending` through the store's own writes (its dispatch, its end) leaves this list, and
 * any write that makes a task pending or may change one that is (a retry, a release, a task made
 * ready or due, a reset, a rolled-back transaction) empties it, to be read again: what is kept
 * is always the first pending tasks in order, as stored.
 *
 * Bounded: at most the rows of the last read (max(READ_AHEAD, the limit asked)).
 */
import type { TaskRow } from "./store-rows";
import type { TaskPhase } from "../../src/engine/task-machine";

export const READ_AHEAD = 16;

export class PendingRows {
  #rows: TaskRow[] | null = null; // null: not known
  #all = false; // the last read found fewer than it asked for: these are every pending task

  /** The first `limit` pending tasks, when known. */
  first(limit: number): TaskRow[] | null {
    if (this.#rows === null || (this.#rows.length < limit && !this.#all)) return null;
    return this.#rows.slice(0, limit);
  }

  /** A read of the first `asked` pending tasks. */
  read(rows: TaskRow[], asked: number): void {
    this.#rows = rows;
    this.#all = rows.length < asked;
  }

  /** The store wrote `row` (as it was read) into state `next`: a task made pending may go before those kept. */
  wrote(row: TaskRow, next: TaskPhase): void {
    if (next === "pending") this.clear();
    else this.left(row.stage, row.idx);
  }

  /** A task left `pending` (dispatched, or ended where it waited). */
  left(stage: string, idx: number): void {
    if (this.#rows === null) return;
    const at = this.#rows.findIndex((r) => r.idx === idx && r.stage === stage);
    if (at >= 0) this.#rows.splice(at, 1);
  }

  clear(): void {
    this.#rows = null;
  }
}
