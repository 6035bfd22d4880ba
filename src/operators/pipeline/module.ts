/** The pipeline operator: sequential steps over a shared store (POST /v1/pipelines, JSON or the XML task format). */
import { defineOperator } from "../define";
import { pipelineOperator, STEPS } from "./plan";
import { listResults, type JobRow } from "../../db/jobs";
import { stepList, type StepEntry } from "./step-list";
import { MAX_STEPS } from "./steps";
import { PipelineRequestSchema } from "./schema";
import { submitPipelineJob } from "./submit";

export const pipelineModule = defineOperator({
  type: "pipeline",
  route: {
    path: "/pipelines",
    operationId: "createPipelineJob",
    otherBodies: {
      "application/xml": {
        schema: {
          type: "string",
          description: 'The XML task format: a `<task type="sequential">` root; pipeline fields as root attributes or query parameters (README: pipelines)',
        },
      },
    },
    summary:
      "Sequential steps over a shared store: llm (optionally a batch over a list), reduce and nested sequential steps, input tasks, context management. Also takes `Content-Type: application/xml` (the XML task format; pipeline fields as root attributes or query parameters)",
  },
  schema: PipelineRequestSchema,
  submit: submitPipelineJob,
  operator: pipelineOperator,
  views: { stageList: { stage: STEPS, list: listSteps } },
});

/** `?stage=steps`: every step, finished or not (at most MAX_STEPS: one page). */
async function listSteps(db: D1Database, job: JobRow): Promise<unknown[]> {
  const markers = await listResults(db, job.id, { stage: STEPS, order: "input", limit: MAX_STEPS });
  return stepList(JSON.parse(job.stages) as Parameters<typeof stepList>[0], markers.results as unknown as StepEntry[]);
}
