/**
 * Every operator, one module a line (./define.ts). The job types, the routes (src/routes/operators.ts)
 * and the job schema's type enum are derived from this list; the coordinator and the job routes
 * look operators up here and otherwise know none of them.
 */
import type { JobSpecBase, Operator } from "../engine/types";
import type { OperatorViews, SpecOf } from "./define";
import { mapModule } from "./map/module";
import { agenticMapModule } from "./agentic-map/module";
import { reduceModule } from "./reduce/module";
import { mapReduceModule } from "./map-reduce/module";
import { pipelineModule } from "./pipeline/module";
import { filterModule } from "./filter/module";
import { classifyModule } from "./classify/module";
import { rankModule } from "./rank/module";
import { resolveModule } from "./resolve/module";
import { evaluationModule } from "./evaluation/module";
import { embedModule } from "./embed/module";
import { joinModule } from "./join/module";

export const OPERATOR_MODULES = [
  mapModule,
  agenticMapModule,
  reduceModule,
  mapReduceModule,
  pipelineModule,
  filterModule,
  classifyModule,
  rankModule,
  resolveModule,
  evaluationModule,
  embedModule,
  joinModule,
] as const;

type Module = (typeof OPERATOR_MODULES)[number];
export type JobType = Module["type"];
export type JobSpec = SpecOf<Module>;
export const JOB_TYPES = OPERATOR_MODULES.map((m) => m.type) as [JobType, ...JobType[]];

const OPERATORS = new Map<string, Operator>(OPERATOR_MODULES.map((m) => [m.type, m.operator as unknown as Operator]));

/** A spec as a registered operator's: the submitting module built it (jobs/submit.ts knows no registry). */
export function jobSpec(spec: JobSpecBase): JobSpec {
  if (!OPERATORS.has(spec.type)) throw new Error(`no operator for job type ${spec.type}`);
  return spec as JobSpec;
}

export function operatorFor(spec: JobSpecBase): Operator {
  const operator = OPERATORS.get(spec.type);
  if (!operator) throw new Error(`no operator for job type ${spec.type}`);
  return operator;
}

/** v1's operators (map, agentic-map) keep v1's shapes: `?wait=true` answers their batch. */
export const isV1 = (type: string): boolean => OPERATORS.get(type)?.v1 === true;

/** The module of a job type (its views: what the generic job routes show of it); undefined for a type no longer served. */
export function moduleOf(type: string): (typeof OPERATOR_MODULES)[number] | undefined {
  return OPERATOR_MODULES.find((m) => m.type === type);
}

/** The job types whose results a flag filters (for the refusal's message). */
export function typesWithFlag(name: string): string[] {
  return OPERATOR_MODULES.filter((m) => (m as { views?: OperatorViews }).views?.resultFlags?.some((f) => f.name === name)).map((m) => m.type);
}
