/** The pipeline operator: sequential steps over a shared store (POST /v1/pipelines, JSON or the XML task format). */
import { defineOperator } from "../define";
import { pipelineOperator } from "./plan";
import { PipelineRequestSchema } from "./schema";
import { submitPipelineJob } from "./submit";

export const pipelineModule = defineOperator({
  type: "pipeline",
  route: {
    path: "/pipelines",
    operationId: "createPipelineJob",
    otherBodies: { "application/xml": { schema: { type: "string", description: "The XML task format: a `<task type=\"sequential\">` root; pipeline fields as root attributes or query parameters (README: pipelines)" } } },
    summary: "Sequential steps over a shared store: llm (optionally a batch over a list), reduce and nested sequential steps, input tasks, context management. Also takes `Content-Type: application/xml` (the XML task format; pipeline fields as root attributes or query parameters)",
  },
  schema: PipelineRequestSchema,
  submit: submitPipelineJob,
  operator: pipelineOperator,
});
