/** The filter operator: keep the items that meet a condition, one model call per item (POST /v1/filter). */
import { defineOperator } from "../define";
import { filterOperator } from "./plan";
import { FilterRequestSchema } from "./schema";
import { submitFilterJob } from "./submit";

export const filterModule = defineOperator({
  type: "filter",
  route: {
    path: "/filter",
    operationId: "createFilterJob",
    summary: "Keep the items that meet a condition: one model call per item answers `{keep, reason}`; the job's output lists the kept indices",
  },
  schema: FilterRequestSchema,
  submit: submitFilterJob,
  operator: filterOperator,
  // `?kept=true|false`: a filter's kept or dropped items (a failed item is neither).
  views: { resultFlags: [{ name: "kept", path: "$.output.keep", succeededOnly: true }] },
});
