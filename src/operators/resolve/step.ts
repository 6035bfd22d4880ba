/** Resolve as a pipeline step: the pair count is checked against `max_comparisons` when the records are known; its value is the job's output. */
import { defineStep } from "../operator-step";
import { resolveOperator } from "./plan";
import { ResolveRequestSchema } from "./schema";
import { checkComparisons, resolveSpec } from "./submit";

export const resolveStep = defineStep({
  operator: resolveOperator,
  schema: ResolveRequestSchema,
  spec: resolveSpec,
  check: checkComparisons,
  value: (_spec, output) => output,
});
