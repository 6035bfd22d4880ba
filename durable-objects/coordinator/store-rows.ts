/**
 * The rows of the coordinator's store as its readers see them (./store.ts): a task's, a stage's,
 * and the views of them the operators and the results read.
 */
import type { StageCounts, StageKind, StageStatus, TaskView } from "../../src/engine/types";
import type { TaskPhase, TaskState } from "../../src/engine/task-machine";
import type { UsageSums } from "../../src/engine/counters";

export type TaskRow = UsageSums & {
  stage: string;
  idx: number;
  input: string;
  state: TaskPhase;
  priority: number;
  attempts: number;
  ready_at: number;
  slot: number | null;
  token: string | null;
  dispatched_at: number | null;
  /** Which model of its stage's fallback chain the task calls (0: the stage's own). */
  route: number;
  /** Times the running dispatch was handed to its worker (a second: its call is re-sent). */
  handed: number;
  problems: string | null;
  reserved: number;
  reserved_usd: number;
  /** The provider batch the task is (or was, execution mode auto) a line of; null: a slot's or a session's. */
  batch_id: string | null;
  session_id: string | null;
  success: number | null;
  output: string | null;
  error: string | null;
  error_kind: string | null;
  /** Attempts lost with no report (the worker or the whole runtime died): see LOST_ATTEMPTS_MAX. */
  losses: number;
  /** Attempts answered with a rate limit (not counted against max_retries), and since when the task is throttled in a row (null: its last answer was no throttle). */
  throttles: number;
  throttled_since: number | null;
};

/** What a transition writes besides the machine's facts (CoordinatorStore.saveTask). */
export interface TaskWrite {
  reserved?: { tokens: number; usd: number };
  usage?: UsageSums;
  batchId?: string | null;
}

/**
 * The tasks table's columns, in the order `taskRows` reads them: a task is read as an array
 * (`cursor.raw()`) and made an object here, its fields set in one order (one shape). The runtime
 * would otherwise set each of its 30 columns as a property from native code, a third of a task
 * read's CPU (BENCHMARKS.md, "The dispatch's read recompiled at every call"). Every field of
 * TaskRow is a column here (the store's tests read a task both ways); a column missing from the
 * table fails the statement.
 */
export const TASK_COLUMNS =
  "stage, idx, input, state, priority, attempts, ready_at, slot, token, dispatched_at, route, handed, problems, reserved, reserved_usd, " +
  "batch_id, session_id, success, output, error, error_kind, losses, throttles, throttled_since, input_tokens, output_tokens, " +
  "cache_read_tokens, cache_write_tokens, cost_usd, unpriced_calls";
const TASK_FIELDS = TASK_COLUMNS.split(", ");

/** The tasks a `SELECT ${TASK_COLUMNS} FROM tasks …` cursor reads. */
export function taskRows(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): TaskRow[] {
  const rows: TaskRow[] = [];
  for (const values of cursor.raw()) {
    const row: Record<string, SqlStorageValue> = {};
    for (let i = 0; i < TASK_FIELDS.length; i++) row[TASK_FIELDS[i] as string] = values[i] as SqlStorageValue;
    rows.push(row as TaskRow);
  }
  return rows;
}

export type StageRow = StageCounts & {
  name: string;
  kind: StageKind;
  /** A children stage's: the stage of the plan whose agents spawned them (null for a stage of the plan). */
  parent: string | null;
  /** What people know the stage as part of (a pipeline's step path; its children's, their parent's); null: none. */
  step: string | null;
  ord: number;
  status: StageStatus;
};

/** Stages that are items' own (not an agent's children's): what the job's `total` counts. */
export const itemStages = (stages: StageRow[]): StageRow[] => stages.filter((s) => s.kind !== "children");

/** A task row's usage sums. */
export const taskSums = (row: TaskRow): UsageSums => ({
  input_tokens: row.input_tokens,
  output_tokens: row.output_tokens,
  cache_read_tokens: row.cache_read_tokens,
  cache_write_tokens: row.cache_write_tokens,
  cost_usd: row.cost_usd,
  unpriced_calls: row.unpriced_calls,
});

export function taskView(row: TaskRow): TaskView {
  return {
    stage: row.stage,
    index: row.idx,
    state: row.state,
    success: row.success === null ? null : row.success === 1,
    output: row.output === null ? null : (JSON.parse(row.output) as unknown),
    input: JSON.parse(row.input) as unknown,
    error: row.error,
  };
}

/** The state machine's facts of a task row (../../src/engine/task-machine.ts). */
export function stateOf(row: TaskRow): TaskState {
  return {
    state: row.state,
    attempts: row.attempts,
    losses: row.losses,
    throttles: row.throttles,
    throttledSince: row.throttled_since,
    readyAt: row.ready_at,
    slot: row.slot,
    token: row.token,
    dispatchedAt: row.dispatched_at,
    handed: row.handed,
    problems: row.problems ? (JSON.parse(row.problems) as string[]) : null,
    route: row.route,
  };
}

/** The column of each fact the task machine moves. */
export const STATE_COLUMNS = {
  state: "state",
  attempts: "attempts",
  losses: "losses",
  throttles: "throttles",
  throttledSince: "throttled_since",
  readyAt: "ready_at",
  slot: "slot",
  token: "token",
  dispatchedAt: "dispatched_at",
  handed: "handed",
  problems: "problems",
  route: "route",
} as const satisfies { [K in keyof TaskState]: keyof TaskRow };

type ColumnValue = string | number | null;

/** The machine's facts of `state` that it sets (all of them, or some: a set-wise move's), as their columns store them. */
export function stateColumns(state: Partial<TaskState>): [column: string, value: ColumnValue][] {
  return (Object.keys(state) as (keyof TaskState)[]).map((key) => [STATE_COLUMNS[key], columnValue(key, state[key])]);
}

/** A fact of the machine's as its column stores it. */
function columnValue(key: keyof TaskState, value: TaskState[keyof TaskState] | undefined): ColumnValue {
  if (key === "problems") return value === null || value === undefined ? null : JSON.stringify(value);
  return (value ?? null) as ColumnValue;
}

/** Every fact and its column, in one list walked by the hot path (a task's write, the row it leaves) without building pairs per call. */
const STATE_PAIRS = Object.entries(STATE_COLUMNS) as [keyof TaskState, keyof TaskRow][];

/** A row with the machine's facts of `next` (what the store writes), each column whose stored value differs from `row`'s told to `changed`. */
export function withState(row: TaskRow, next: TaskState, changed: (column: string, value: ColumnValue) => void): TaskRow {
  const out: Record<string, unknown> = { ...row };
  for (const [key, column] of STATE_PAIRS) {
    const value = columnValue(key, next[key]);
    if (row[column] !== value) changed(column, value);
    out[column] = value;
  }
  return out as TaskRow;
}
