/** The classify operator: one label (or every label that applies) per item, from a fixed list (POST /v1/classify). */
import { defineOperator } from "../define";
import { classifyOperator } from "./plan";
import { ClassifyRequestSchema } from "./schema";
import { submitClassifyJob } from "./submit";

export const classifyModule = defineOperator({
  type: "classify",
  route: {
    path: "/classify",
    operationId: "createClassifyJob",
    summary:
      "Label every item from a fixed list of categories: one model call per item answers `{label, confidence}` (or `{labels, confidence}`); the job's output counts the items per label",
  },
  schema: ClassifyRequestSchema,
  submit: submitClassifyJob,
  operator: classifyOperator,
});
