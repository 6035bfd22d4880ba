/**
 * An operator that is also a pipeline step type (contract v3, "Semantic operators": each is "also
 * a pipeline step type of the same name"). The step runs the operator's own plan over a list from
 * the shared store (`inputs_from`), its stages under the step's path; the step's value in the
 * store is the operator's job output, with what the next step needs beside it (the kept items,
 * the top items). The pipeline (./pipeline/sub-plan.ts) runs any operator this describes: adding
 * a step type is the operator's `step.ts` and a line in ./pipeline/operator-steps.ts. A step over
 * two lists (a join's) names them (`lists`) and makes its operator's inputs of them (`itemsOf`).
 */
import type { z } from "@hono/zod-openapi";
import type { JobBase } from "../jobs/submit";
import type { JobSpecBase, Operator, PlanReader } from "../engine/types";

export interface OperatorStep<S extends JobSpecBase = JobSpecBase, B = never> {
  operator: Operator<S>;
  /** The operator's request schema: a step takes its fields but the job's (./pipeline/operator-step-fields.ts). */
  schema: z.ZodObject;
  /** The operator's spec from the step's fields (the pipeline's as defaults); throws the route's 400s. */
  spec(env: Env, body: B, base: JobBase): S;
  /** Throws (an ApiError) when these items cannot run: at submission when they are the pipeline's inputs, else when the step starts (the step fails with its message). */
  check?(spec: S, items: unknown[]): void;
  /**
   * The step's lists when it takes more than one (a join's two): each step field (a reference into
   * the store) with the request field it stands for. Absent: one list at `inputs_from`, for `inputs`.
   * With them, `check` and `itemsOf` are handed the lists (`[left, right]`), in this order.
   */
  lists?: Readonly<Record<string, string>>;
  /** The operator's inputs from the step's lists, checked as `check` does (throws the same); absent: the list itself. */
  itemsOf?(spec: S, lists: unknown[][]): unknown[];
  /** The step's value in the shared store, from the operator's job output, the items it ran over and its tasks (`reader`: the operator's stage names). */
  value(spec: S, output: unknown, items: unknown[], reader: PlanReader): unknown;
}

/** Checks a step's parts against each other (the spec is the operator's, the body the schema's). */
export function defineStep<S extends JobSpecBase, Sch extends z.ZodObject>(step: OperatorStep<S, z.infer<Sch>> & { schema: Sch }): OperatorStep {
  return step as unknown as OperatorStep;
}
