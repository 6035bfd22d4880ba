/**
 * An operator's own index over its tasks (PlanReader `keyed`, `outputs`): the keys a task it
 * finished itself is filed under (Advance `local[].keys`, table task_keys), read back by key, and
 * the outputs of a stage's tasks read together — an embedding blocking's buckets and the vectors in
 * them (../../src/operators/embedding-blocking). Every read seeks on a primary key, a bounded
 * number of values to a statement.
 */
import { exactLimit } from "./sql-limit";

/** Values bound in one statement at most, with room for the others (Durable Object SQLite binds 100). */
const BOUND_CHUNK = 90;
/** Keys read in one statement: workerd's SQLite parses at most 5 terms of a compound SELECT. */
const KEYS_PER_STATEMENT = 5;
/** Keys filed in one statement (three values bound each). */
const KEYS_PER_INSERT = 30;

export class TaskIndex {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Files a task under keys of its stage (an operator's own index: PlanReader `keyed`). */
  file(stage: string, idx: number, keys: readonly string[]): void {
    for (let at = 0; at < keys.length; at += KEYS_PER_INSERT) {
      const chunk = keys.slice(at, at + KEYS_PER_INSERT);
      const rows = chunk.map(() => "(?, ?, ?)").join(", ");
      this.#sql.exec(`INSERT OR IGNORE INTO task_keys (stage, key, idx) VALUES ${rows}`, ...chunk.flatMap((key) => [stage, key, idx]));
    }
  }

  /**
   * The first `limit` task indices of a stage filed under each of `keys`, together, ascending: each
   * key one seek on task_keys' primary key, KEYS_PER_STATEMENT keys to a statement (a window
   * function over the keys scanned their whole buckets).
   */
  keyed(stage: string, keys: readonly string[], limit: number): number[] {
    const found = new Set<number>();
    for (let at = 0; at < keys.length; at += KEYS_PER_STATEMENT) {
      const chunk = keys.slice(at, at + KEYS_PER_STATEMENT);
      const one = `SELECT idx FROM (SELECT idx FROM task_keys WHERE stage = ? AND key = ? ORDER BY idx ${exactLimit(limit)})`;
      const args = chunk.flatMap((key) => [stage, key]);
      for (const row of this.#sql.exec<{ idx: number }>(chunk.map(() => one).join(" UNION ALL "), ...args)) found.add(row.idx);
    }
    return [...found].sort((a, b) => a - b);
  }

  /** The outputs of a stage's finished tasks at `indices` (others absent): seeks on the primary key, BOUND_CHUNK indices to a statement. */
  outputs(stage: string, indices: readonly number[]): Map<number, unknown> {
    const out = new Map<number, unknown>();
    for (let at = 0; at < indices.length; at += BOUND_CHUNK) {
      const chunk = indices.slice(at, at + BOUND_CHUNK);
      // A seek on the primary key: no state index holds finished tasks (schema step 14).
      const sql = `SELECT idx, output FROM tasks WHERE stage = ? AND idx IN (${chunk.map(() => "?").join(", ")}) AND state = 'done'`;
      for (const row of this.#sql.exec<{ idx: number; output: string | null }>(sql, stage, ...chunk))
        out.set(row.idx, row.output === null ? null : JSON.parse(row.output));
    }
    return out;
  }
}
