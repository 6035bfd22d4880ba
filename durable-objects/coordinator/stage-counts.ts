/**
 * A stage's counters as its tasks end (./store.ts): the ends of a turn are added to the stage's
 * row in one statement at the turn's end (a microtask, before the turn's writes commit together,
 * as ./meta-table.ts's `soon`), not one statement per end — in S2 a turn settles 2.3–2.65 reports
 * (BENCHMARKS.md). The counts an end answers (completed, total) are kept from the stage's first
 * read. The store writes what is added before any read of the stages' rows and before any other
 * write of their counts, and forgets what it kept when a stage is added, resized, reopened or
 * dropped; a transaction that rolls back restores both as they were at its start (`mark`). The
 * tasks not done over every stage (`open`) are kept too, from one read, through each end.
 *
 * Bounded: one entry per stage of the one job (its plan's stages and their children's).
 */
import { addSums, type UsageSums } from "../../src/engine/counters";
import { microtask } from "../../src/lib/microtask";
import { ADD_USAGE, usageArgs } from "./store-sql";

interface Added {
  completed: number;
  succeeded: number;
  failed: number;
  usage: UsageSums;
}

export interface StageProgress {
  completed: number;
  total: number;
}

export class StageCounts {
  readonly #sql: SqlStorage;
  #added = new Map<string, Added>(); // this turn's ends, not yet written (entries replaced, never changed)
  #known = new Map<string, StageProgress>(); // each stage's counts as they are: its row's, with what is added
  #open: number | null = null; // the tasks not done over every stage, once read

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** A task of stage `name` ended: the stage's counts now. */
  ended(name: string, success: boolean, usage: UsageSums): StageProgress {
    if (this.#open !== null) this.#open--;
    let known = this.#known.get(name);
    if (!known) {
      this.flush();
      known = this.#sql.exec<{ completed: number; total: number }>("SELECT completed, total FROM stages WHERE name = ?", name).one();
    }
    const now = { completed: known.completed + 1, total: known.total };
    this.#known.set(name, now);
    if (this.#added.size === 0) microtask(() => this.flush());
    const was = this.#added.get(name);
    const end = { completed: 1, succeeded: success ? 1 : 0, failed: success ? 0 : 1, usage };
    this.#added.set(
      name,
      was ? { completed: was.completed + 1, succeeded: was.succeeded + end.succeeded, failed: was.failed + end.failed, usage: addSums(was.usage, usage) } : end,
    );
    return { ...now };
  }

  /** Writes what this turn's ends added: one statement per stage. */
  flush(): void {
    if (this.#added.size === 0) return;
    const added = this.#added;
    this.#added = new Map();
    for (const [name, a] of added) {
      this.#sql.exec(
        `UPDATE stages SET completed = completed + ?, succeeded = succeeded + ?, failed = failed + ?, ${ADD_USAGE} WHERE name = ?`,
        a.completed,
        a.succeeded,
        a.failed,
        ...usageArgs(a.usage),
        name,
      );
    }
  }

  /** Tasks not done, over every stage: from the stage counters (a handful of rows), not a scan of the tasks. */
  open(): number {
    if (this.#open === null) {
      this.flush();
      this.#open = this.#sql.exec<{ n: number | null }>("SELECT SUM(total - completed) AS n FROM stages").one().n ?? 0;
    }
    return this.#open;
  }

  /** A stage was added or its total changed: the counts are read again. */
  forget(): void {
    this.#known = new Map();
    this.#open = null;
  }

  /** Before a write that sets or takes back counts (a stage reopened or dropped): what is added written first, the counts read again after. */
  flushAndForget(): void {
    this.flush();
    this.forget();
  }

  /** What is added and kept now, and what puts them back (a transaction that rolls back). */
  mark(): () => void {
    const added = new Map(this.#added);
    const known = new Map(this.#known);
    return () => {
      this.#added = added;
      this.#known = known;
      this.#open = null;
    };
  }
}
