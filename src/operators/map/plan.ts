/**
 * The map operator's plan: one stage, `items`, one independent task per input. A failed item does
 * not stop the others; the job completes once every item has a result.
 */
import type { CallSpec, JobSpecBase, Operator, TaskResult } from "../../engine/types";

export interface MapJobSpec extends JobSpecBase {
  type: "map";
  call: CallSpec;
}

export const ITEMS_STAGE = "items";

export const mapOperator: Operator<MapJobSpec> = {
  v1: true,
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => ({
    stages: [{ name: ITEMS_STAGE, total: inputs.length }],
    tasks: inputs.map((input, index) => ({ stage: ITEMS_STAGE, index, input })),
  }),
  advance: (_spec, reader) => (reader.open() === 0 ? { ready: [], end: { status: "completed", output: null, error: null } } : { ready: [] }),
  work: (spec) => ({ kind: "call", tenantId: spec.tenantId, call: spec.call }),
  vars: (_spec, task) => ({ item: task.input }),
  result: (_spec, task, finish): TaskResult => ({
    index: task.index,
    input: task.input,
    output: finish.success ? finish.output : null,
    success: finish.success,
    error: finish.error,
    error_kind: finish.errorKind,
    attempts: finish.attempts,
    usage: finish.usage,
  }),
};
