/** POST /v1/map, /v1/reduce, /v1/map-reduce and /v1/pipelines: operators of one model call per task, served by the shared route factory. */
import { submitMapJob } from "../operators/map/submit";
import { submitReduceJob } from "../operators/reduce/submit";
import { ReduceRequestSchema } from "../operators/reduce/schema";
import { submitMapReduceJob } from "../operators/map-reduce/submit";
import { MapReduceRequestSchema } from "../operators/map-reduce/schema";
import { submitPipelineJob } from "../operators/pipeline/submit";
import { PipelineRequestSchema } from "../operators/pipeline/schema";
import { newRouter } from "../lib/router";
import { pipelinesFromXml } from "./pipelines-xml";
import { MapRequestSchema } from "../schemas/map";
import { operatorRoute } from "./operator-route";

export function mapRoutes() {
  return newRouter()
    .use("/pipelines", pipelinesFromXml)
    .route("/", operatorRoute({
      path: "/map",
      operationId: "createMapJob",
      summary: "Run a prompt over every input: one model call per item, validated against output_schema",
      schema: MapRequestSchema,
      submit: submitMapJob,
    }))
    .route("/", operatorRoute({
      path: "/reduce",
      operationId: "createReduceJob",
      summary: "An ordered fold: optional inner task per input (run ahead in parallel), then reductions strictly in order",
      schema: ReduceRequestSchema,
      submit: submitReduceJob,
    }))
    .route("/", operatorRoute({
      path: "/map-reduce",
      operationId: "createMapReduceJob",
      summary: "The corpus orchestrator: batched mappers, a deterministic shuffle, hierarchical/flat/category reduce, synthesis",
      schema: MapReduceRequestSchema,
      submit: submitMapReduceJob,
    }))
    .route("/", operatorRoute({
      path: "/pipelines",
      operationId: "createPipelineJob",
      otherBodies: { "application/xml": { schema: { type: "string", description: "The XML task format: a `<task type=\"sequential\">` root; pipeline fields as root attributes or query parameters (README: pipelines)" } } },
      summary: "Sequential steps over a shared store: llm (optionally a batch over a list), reduce and nested sequential steps, input tasks, context management. Also takes `Content-Type: application/xml` (the XML task format; pipeline fields as root attributes or query parameters)",
      schema: PipelineRequestSchema,
      submit: submitPipelineJob,
    }));
}
