/**
 * The plan of v1 operators: one stage, `items`, one independent task per input; a failed item
 * does not stop the others, and the job completes once every item has a result.
 */
import type { Advance, CallSpec, JobSpecBase, Plan, PlanReader, StageWork, TaskFinish, TaskResult } from "../engine/types";

export const ITEMS_STAGE = "items";

export function itemsPlan(inputs: unknown[], sessionId: () => string | null = () => null): Plan {
  return {
    stages: [{ name: ITEMS_STAGE, total: inputs.length }],
    tasks: inputs.map((input, index) => ({ stage: ITEMS_STAGE, index, input, sessionId: sessionId() })),
  };
}

export function completeWhenAllDone(reader: PlanReader): Advance {
  return reader.open() === 0 ? { ready: [], end: { status: "completed", output: null, error: null } } : { ready: [] };
}

/** The result of one item's call (MapResult's shape): its output when it succeeded, else why not. */
export const itemResult = (task: { index: number; input: unknown }, finish: TaskFinish): TaskResult => ({
  index: task.index,
  input: task.input,
  output: finish.success ? finish.output : null,
  success: finish.success,
  error: finish.error,
  error_kind: finish.errorKind,
  attempts: finish.attempts,
  usage: finish.usage,
  cost_usd: finish.costUsd,
});

/** The parts of an operator of one call per input in the stage `items` (map, embed): its plan, its end, its calls, its variable `item`. */
export function oneCallPerItem<S extends JobSpecBase & { call: CallSpec }>() {
  return {
    mainStage: () => ITEMS_STAGE,
    plan: (_spec: S, inputs: unknown[]) => itemsPlan(inputs),
    advance: (_spec: S, reader: PlanReader) => completeWhenAllDone(reader),
    work: (spec: S): StageWork => ({ kind: "call", tenantId: spec.tenantId, call: spec.call }),
    batchable: () => true,
    vars: (_spec: S, task: { input: unknown }) => ({ item: task.input }),
  };
}
