/**
 * The SQL of the coordinator store's task statements (./store.ts): a plan's rows inserted in
 * chunks, the usage columns, a transition's changed columns, and the task machine's set-wise moves
 * (SET_WISE) as statements — derived from the machine's own table, never written by hand.
 */
import { SET_WISE, type SetWiseMove, type TaskState } from "../../src/engine/task-machine";
import type { UsageSums } from "../../src/engine/counters";
import type { TaskSeed } from "../../src/engine/types";
import { stateColumns, withState, type TaskRow } from "./store-rows";

/** At most this much JSON per insert of many tasks: well under a bound value's limit (2 MB on Cloudflare). */
export const INSERT_CHUNK_CHARS = 512 * 1024;
export const INSERT_ROWS =
  "INSERT INTO tasks (stage, idx, input, state, priority, session_id) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM json_each(?)";

/** A new task's row, in the column order of INSERT_ROWS and `#insert`: `input` is its JSON text. */
export function taskColumns(seed: TaskSeed, input: string): [string, number, string, "blocked" | "pending", number, string | null] {
  return [seed.stage, seed.index, input, seed.blocked ? "blocked" : "pending", seed.priority ?? 0, seed.sessionId ?? null];
}

/**
 * A plan's tasks, a chunk of rows per statement (a 1,000-item job: one statement, not 1,000): the
 * rows go as one JSON array of `[stage, idx, input, state, priority, session_id]`, each input the
 * JSON text that the store's one-row insert would store, read back out with `json_each`. A row too
 * large for a chunk (its input escaped once more inside the array) goes to `alone`.
 */
export function insertChunked(sql: SqlStorage, seeds: TaskSeed[], alone: (seed: TaskSeed, input: string) => void): void {
  let rows: string[] = [];
  let chars = 0;
  const flush = () => {
    if (rows.length > 0) sql.exec(INSERT_ROWS, `[${rows.join(",")}]`);
    rows = [];
    chars = 0;
  };
  for (const seed of seeds) {
    const input = JSON.stringify(seed.input ?? null);
    const row = JSON.stringify(taskColumns(seed, input));
    if (chars + row.length > INSERT_CHUNK_CHARS) flush();
    if (row.length > INSERT_CHUNK_CHARS) {
      alone(seed, input);
      continue;
    }
    rows.push(row);
    chars += row.length + 1;
  }
  flush();
}

/** The usage columns tasks and stages share, added to (`ADD_USAGE`, then its six values: `usageArgs`) or cleared. */
export const ADD_USAGE = `input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?,
  cache_write_tokens = cache_write_tokens + ?, cost_usd = cost_usd + ?, unpriced_calls = unpriced_calls + ?`;
export const CLEAR_USAGE = "input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, cost_usd = 0, unpriced_calls = 0";
export const usageArgs = (u: UsageSums): number[] => [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_usd, u.unpriced_calls];

/**
 * The task's columns the state machine moves that `next` changes (as `col = ?` with their values):
 * a transition writes only those, as the statements it replaced did (a dispatch: state, attempts,
 * slot, token, dispatched_at; an end: state, slot, token). With the row they leave (`row`), made
 * in the same pass.
 */
export function stateChanges(row: TaskRow, next: TaskState): { sets: string; args: (string | number | null)[]; row: TaskRow } {
  let sets = "";
  const args: (string | number | null)[] = [];
  const after = withState(row, next, (column, value) => {
    sets += `${sets ? ", " : ""}${column} = ?`;
    args.push(value);
  });
  return { sets, args, row: after };
}

/**
 * A set-wise move of the task machine (SET_WISE) as SQL: `SET` what it sets, with its values, and
 * the state it moves from — a word of the machine's, written into the statement's `WHERE` as a
 * literal where a state's (partial) index should serve it, else bound.
 */
function setWise(move: SetWiseMove): { sets: string; args: (string | number | null)[]; from: string } {
  const columns = stateColumns(SET_WISE[move].to);
  return { sets: columns.map(([column]) => `${column} = ?`).join(", "), args: columns.map(([, value]) => value), from: SET_WISE[move].from };
}
export const READY = setWise("ready");
export const DUE = setWise("due");
export const CHILD_ENDED = setWise("child-ended");
export const RELEASE = setWise("release");
