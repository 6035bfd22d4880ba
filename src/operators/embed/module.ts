/** The embed operator: an embedding per input (POST /v1/embed). */
import { defineOperator } from "../define";
import { embedOperator } from "./plan";
import { EmbedRequestSchema } from "./schema";
import { submitEmbedJob } from "./submit";

export const embedModule = defineOperator({
  type: "embed",
  route: {
    path: "/embed",
    operationId: "createEmbedJob",
    summary: "Embed every input: one embedding call per item (or a line of OpenAI's batch API), each result carrying its `embedding`",
  },
  schema: EmbedRequestSchema,
  submit: submitEmbedJob,
  operator: embedOperator,
});
