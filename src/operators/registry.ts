/**
 * Every operator, by job type. The coordinator and the job routes look operators up here and
 * otherwise know none of them.
 */
import type { JobSpecBase, JobType, Operator } from "../engine/types";
import { agenticMapOperator, type AgentJobSpec } from "./agentic-map/plan";
import { mapOperator, type MapJobSpec } from "./map/plan";
import { reduceOperator, type ReduceJobSpec } from "./reduce/plan";
import { mapReduceOperator, type MapReduceJobSpec } from "./map-reduce/plan";
import { pipelineOperator, type PipelineJobSpec } from "./pipeline/plan";

export type JobSpec = MapJobSpec | AgentJobSpec | ReduceJobSpec | MapReduceJobSpec | PipelineJobSpec;

const OPERATORS: { [T in JobType]: Operator<Extract<JobSpec, { type: T }>> } = {
  map: mapOperator,
  agentic_map: agenticMapOperator,
  reduce: reduceOperator,
  map_reduce: mapReduceOperator,
  pipeline: pipelineOperator,
};

export function operatorFor(spec: JobSpecBase): Operator {
  return OPERATORS[spec.type] as unknown as Operator;
}
