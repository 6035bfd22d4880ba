/** The map operator's plan: one model call per input, in the single stage `items`. */
import type { CallSpec, JobSpecBase, Operator } from "../../engine/types";
import { completeWhenAllDone, ITEMS_STAGE, itemResult, itemsPlan } from "../single-stage";

export interface MapJobSpec extends JobSpecBase {
  type: "map";
  call: CallSpec;
}

export const mapOperator: Operator<MapJobSpec> = {
  v1: true,
  startedFields: {}, // v1's MAP_STARTED has no type
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => itemsPlan(inputs),
  advance: (_spec, reader) => completeWhenAllDone(reader),
  work: (spec) => ({ kind: "call", tenantId: spec.tenantId, call: spec.call }),
  batchable: () => true,
  vars: (_spec, task) => ({ item: task.input }),
  result: (_spec, task, finish) => itemResult(task, finish),
};
