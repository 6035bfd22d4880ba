/** The map operator's plan: one model call per input, in the single stage `items`. */
import type { CallSpec, JobSpecBase, Operator } from "../../engine/types";
import { itemResult, oneCallPerItem } from "../single-stage";

export interface MapJobSpec extends JobSpecBase {
  type: "map";
  call: CallSpec;
}

export const mapOperator: Operator<MapJobSpec> = {
  v1: true,
  startedFields: {}, // v1's MAP_STARTED has no type
  ...oneCallPerItem<MapJobSpec>(),
  result: (_spec, task, finish) => itemResult(task, finish),
};
