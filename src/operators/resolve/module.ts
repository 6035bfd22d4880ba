/** The resolve operator: entity resolution by blocking, pairwise comparisons and transitive closure (POST /v1/resolve). */
import { defineOperator } from "../define";
import { resolveOperator } from "./plan";
import { ResolveRequestSchema } from "./schema";
import { submitResolveJob } from "./submit";

export const resolveModule = defineOperator({
  type: "resolve",
  route: {
    path: "/resolve",
    operationId: "createResolveJob",
    summary:
      "Entity resolution: the pairs a blocking allows compared by the model in parallel, matches closed transitively into clusters, an optional resolution call per cluster; refused (422) when the blocking compares more than max_comparisons pairs",
  },
  schema: ResolveRequestSchema,
  submit: submitResolveJob,
  operator: resolveOperator,
});
