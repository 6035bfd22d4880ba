/**
 * The reduce operator's plan: an ordered fold (../fold.ts) over the stages `inner` (optional: one
 * task per input, run ahead in parallel) and `reduction` (one task per input, strictly in order).
 *
 * A task that fails after its retries fails the job with the failure context; `output` is the
 * last accumulator reached. After a recover, `advance(null)` finds the first reduction not done
 * and releases it as soon as its inputs are there.
 */
import { outputBound } from "../../engine/estimate";
import { taskResultBase } from "../../engine/task-result";
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskResult, TaskView } from "../../engine/types";
import { firstUnreduced, foldResult, foldTasks, foldVars, lastAccumulator, releaseReduction, type FoldEntry, type FoldStages } from "../fold";

export interface ReduceJobSpec extends JobSpecBase {
  type: "reduce";
  inner: CallSpec | null;
  reduction: CallSpec;
  initialValue: unknown;
  total: number;
}

export const INNER = "inner";
export const REDUCTION = "reduction";

export { entries } from "../fold";

const stagesOf = (spec: ReduceJobSpec): FoldStages => ({ inner: spec.inner ? INNER : null, reduction: REDUCTION });

function advance(spec: ReduceJobSpec, reader: PlanReader, trigger: TaskView | null): Advance {
  const stages = stagesOf(spec);
  if (trigger && trigger.success === false) {
    const name = (trigger.input as FoldEntry).name;
    return {
      ready: [],
      end: {
        status: "failed",
        output: lastAccumulator(stages, spec.initialValue, reader, spec.total),
        error: { code: "task_failed", message: trigger.error ?? "the task failed", stage: trigger.stage, index: trigger.index, step: name },
      },
    };
  }
  const next = trigger === null ? firstUnreduced(stages, reader, spec.total) : trigger.stage === REDUCTION ? trigger.index + 1 : trigger.index;
  if (next >= spec.total) {
    const done = spec.total === 0 || firstUnreduced(stages, reader, spec.total) === spec.total;
    return done
      ? { ready: [], end: { status: "completed", output: lastAccumulator(stages, spec.initialValue, reader, spec.total), error: null } }
      : { ready: [] };
  }
  return { ready: releaseReduction(stages, spec.initialValue, reader, next) };
}

export const reduceOperator: Operator<ReduceJobSpec> = {
  v1: false,
  startedFields: { type: "reduce" },
  mainStage: (spec) => (spec.inner ? INNER : REDUCTION),
  plan: (spec, inputs) => {
    const list = inputs as { name: string; value: unknown }[];
    const tasks = foldTasks(stagesOf(spec), list);
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
  vars: (_spec, task) => foldVars(task.stage === INNER, task),
  estimateVars: (spec, task) => {
    const entry = task.input as FoldEntry;
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
  result: (_spec, task, finish): TaskResult => foldResult(task.stage === INNER, task, taskResultBase(task, finish), finish),
};
