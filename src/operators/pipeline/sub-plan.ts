/**
 * An operator's plan run as a pipeline step (./operator-steps.ts), nested as ../nested-plan.ts
 * nests any plan: its stages under the step's path (./stage-names.ts), its reader seeing only
 * them by the operator's own names. The operator's end is the step's: its output becomes the
 * step's value.
 */
import type { Advance, JobSpecBase, PlanReader } from "../../engine/types";
import type { OperatorStep } from "../operator-step";
import { startPlan } from "../nested-plan";
import { operatorStep } from "./operator-steps";

export interface OperatorUnit {
  type: string;
  /** The operator's spec, its job fields the pipeline's (./operator-step-fields.ts). */
  spec: JobSpecBase;
}

interface Prepared {
  step: OperatorStep;
  spec: JobSpecBase;
  stages: { name: string; skipped?: boolean }[];
}

// Made once per unit and job (the plan's functions ask for them with every task's claim, result and advance).
const prepared = new WeakMap<OperatorUnit, Prepared>();

function prepare(job: JobSpecBase, unit: OperatorUnit): Prepared {
  const known = prepared.get(unit);
  if (known && known.spec.jobId === job.jobId && known.spec.tenantId === job.tenantId) return known;
  const step = operatorStep(unit.type);
  const spec = { ...unit.spec, jobId: job.jobId, tenantId: job.tenantId };
  const stages = step.operator.plan(spec, []).stages.map((s) => ({ name: s.name, ...(s.skipped ? { skipped: true } : {}) }));
  const made = { step, spec, stages };
  prepared.set(unit, made);
  return made;
}

/** The step's operator and its spec as it runs: the pipeline's job and tenant. */
export function subOperator(job: JobSpecBase, unit: OperatorUnit): { step: OperatorStep; spec: JobSpecBase } {
  return prepare(job, unit);
}

/** The operator's stages (its plan's, before it has items), as it names them. */
export function subStages(job: JobSpecBase, unit: OperatorUnit): { name: string; skipped?: boolean }[] {
  return prepare(job, unit).stages;
}

/** The operator's start over its items: its plan's tasks and sizes, and what follows them with nothing finished. */
export function startSub(job: JobSpecBase, unit: OperatorUnit, path: string, reader: PlanReader, items: unknown[]): Advance {
  const { step, spec } = subOperator(job, unit);
  return startPlan(step.operator, spec, path, reader, items);
}
