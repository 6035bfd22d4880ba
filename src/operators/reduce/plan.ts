/**
 * The reduce operator's plan: an ordered fold. Stages `inner` (optional: one task per input, no
 * dependency between them, so they run ahead in parallel) and `reduction` (one task per input,
 * strictly in order). Reduction i becomes ready once inner i and reduction i−1 have succeeded;
 * its input then holds the accumulator and the inner result. Reductions are the critical path, so
 * they are dispatched before any inner task waiting for a slot.
 *
 * A task that fails after its retries fails the job with the failure context; `output` is the
 * last accumulator reached. After a recover, `advance(null)` finds the first reduction not done
 * and releases it as soon as its inputs are there.
 */
import { outputBound } from "../../engine/estimate";
import { taskResultBase } from "../../engine/task-result";
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskResult, TaskView } from "../../engine/types";

export interface ReduceJobSpec extends JobSpecBase {
  type: "reduce";
  inner: CallSpec | null;
  reduction: CallSpec;
  initialValue: unknown;
  total: number;
}

export const INNER = "inner";
export const REDUCTION = "reduction";
const CRITICAL = 0; // reductions first
const AHEAD = 1; // inner tasks fill the slots reductions leave

/** The stored input of a task: the entry's name and value; a released reduction adds the fold's values. */
interface EntryInput {
  name: string;
  original_input: unknown;
  accumulator?: unknown;
  current_result?: unknown;
}

/** Named inputs (an object, in key order) or a list; each entry's name is its key or its index. */
export function entries(inputs: unknown[] | Record<string, unknown>): { name: string; value: unknown }[] {
  return Array.isArray(inputs)
    ? inputs.map((value, i) => ({ name: String(i), value }))
    : Object.entries(inputs).map(([name, value]) => ({ name, value }));
}

function lastAccumulator(spec: ReduceJobSpec, reader: PlanReader): unknown {
  for (let i = spec.total - 1; i >= 0; i--) {
    const r = reader.task(REDUCTION, i);
    if (r?.state === "done" && r.success) return r.output;
  }
  return spec.initialValue;
}

/** Reduction k, made ready if its inputs are there. */
function release(spec: ReduceJobSpec, reader: PlanReader, k: number): Advance["ready"] {
  const task = reader.task(REDUCTION, k);
  if (!task || task.state !== "blocked") return [];
  const entry = task.input as EntryInput;
  let current: unknown = entry.original_input;
  if (spec.inner) {
    const inner = reader.task(INNER, k);
    if (inner?.state !== "done" || !inner.success) return [];
    current = inner.output;
  }
  let accumulator = spec.initialValue;
  if (k > 0) {
    const previous = reader.task(REDUCTION, k - 1);
    if (previous?.state !== "done" || !previous.success) return [];
    accumulator = previous.output;
  }
  const input: EntryInput = { name: entry.name, original_input: entry.original_input, accumulator, current_result: current };
  return [{ stage: REDUCTION, index: k, input, priority: CRITICAL }];
}

function firstUnreduced(spec: ReduceJobSpec, reader: PlanReader): number {
  for (let i = 0; i < spec.total; i++) {
    const r = reader.task(REDUCTION, i);
    if (!(r?.state === "done" && r.success)) return i;
  }
  return spec.total;
}

function advance(spec: ReduceJobSpec, reader: PlanReader, trigger: TaskView | null): Advance {
  if (trigger && trigger.success === false) {
    const name = (trigger.input as EntryInput).name;
    return {
      ready: [],
      end: {
        status: "failed",
        output: lastAccumulator(spec, reader),
        error: { code: "task_failed", message: trigger.error ?? "the task failed", stage: trigger.stage, index: trigger.index, step: name },
      },
    };
  }
  const next = trigger === null ? firstUnreduced(spec, reader) : trigger.stage === REDUCTION ? trigger.index + 1 : trigger.index;
  if (next >= spec.total) {
    const done = spec.total === 0 || firstUnreduced(spec, reader) === spec.total;
    return done ? { ready: [], end: { status: "completed", output: lastAccumulator(spec, reader), error: null } } : { ready: [] };
  }
  return { ready: release(spec, reader, next) };
}

export const reduceOperator: Operator<ReduceJobSpec> = {
  v1: false,
  startedFields: { type: "reduce" },
  mainStage: (spec) => (spec.inner ? INNER : REDUCTION),
  plan: (spec, inputs) => {
    const list = inputs as { name: string; value: unknown }[];
    const tasks = list.flatMap(({ name, value }, index) => {
      const entry: EntryInput = { name, original_input: value };
      const reduction = { stage: REDUCTION, index, input: entry, blocked: true, priority: CRITICAL };
      return spec.inner ? [{ stage: INNER, index, input: entry, priority: AHEAD }, reduction] : [reduction];
    });
    return {
      stages: [
        { name: INNER, total: spec.inner ? list.length : 0, skipped: spec.inner === null },
        { name: REDUCTION, total: list.length },
      ],
      tasks,
    };
  },
  advance,
  work: (spec, stage) => ({ kind: "call", tenantId: spec.tenantId, call: stage === INNER && spec.inner ? spec.inner : spec.reduction }),
  vars: (_spec, task) => {
    const entry = task.input as EntryInput;
    if (task.stage === INNER) return { item: entry.original_input, name: entry.name, index: task.index };
    return {
      accumulator: entry.accumulator,
      current_result: entry.current_result,
      original_input: entry.original_input,
      name: entry.name,
      index: task.index,
    };
  },
  estimateVars: (spec, task) => {
    const entry = task.input as EntryInput;
    if (task.stage === INNER) return { vars: { item: entry.original_input, name: entry.name, index: task.index }, boundTokens: 0 };
    // The accumulator (after the first step) and the inner result arrive later: bounded by their max_tokens.
    const vars = {
      accumulator: task.index === 0 ? spec.initialValue : "",
      current_result: spec.inner ? "" : entry.original_input,
      original_input: entry.original_input,
      name: entry.name,
      index: task.index,
    };
    const boundTokens = (task.index > 0 ? outputBound(spec.reduction.maxTokens) : 0) + (spec.inner ? outputBound(spec.inner.maxTokens) : 0);
    return { vars, boundTokens };
  },
  result: (_spec, task, finish): TaskResult => {
    const entry = task.input as EntryInput;
    const base = { ...taskResultBase(task, finish), name: entry.name };
    return task.stage === REDUCTION ? { ...base, accumulator: finish.success ? finish.output : (entry.accumulator ?? null) } : base;
  },
};
