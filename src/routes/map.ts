/**
 * POST /v1/map: 202 with the job's id and links; with `Accept: text/event-stream` the job's event
 * stream instead; with `?wait=true` 200 and the batch once the job ends (202 if it has not within
 * WAIT_LIMIT_SECS). An `Idempotency-Key` replays the original job (200) or is 422 on another body.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { limits } from "../config";
import { getJob } from "../db/jobs";
import { coordinatorFor, openEventStream, type Submission } from "../jobs/submit";
import { submitMapJob } from "../jobs/map-job";
import { jobLinks } from "../jobs/views";
import { jsonBody, newRouter } from "../lib/router";
import { BatchSchema } from "../schemas/jobs";
import { JobCreatedSchema, MapRequestSchema } from "../schemas/map";
import { bearerSecurity, commonErrors, errorResponse } from "../schemas/common";
import { allResults, batchView } from "./jobs";

const IDEMPOTENCY_KEY_MAX = 255;

export const submissionQuery = z.object({ wait: z.enum(["true", "false"]).optional().openapi({ description: "Wait for the job to end" }) });
export const submissionHeaders = z.object({
  "idempotency-key": z.string().min(1).max(IDEMPOTENCY_KEY_MAX).optional(),
  accept: z.string().optional(),
});

const mapRoute = createRoute({
  method: "post",
  path: "/map",
  tags: ["operators"],
  summary: "Run a prompt over every input: one model call per item, validated against output_schema",
  security: bearerSecurity,
  request: {
    body: jsonBody(MapRequestSchema),
    query: submissionQuery,
    headers: submissionHeaders,
  },
  responses: {
    200: {
      content: { "application/json": { schema: z.union([JobCreatedSchema, BatchSchema]) } },
      description: "An idempotent replay of the original job, or (`?wait=true`) the finished batch",
    },
    202: {
      content: {
        "application/json": { schema: JobCreatedSchema },
        "text/event-stream": { schema: z.string() },
      },
      description: "The job was accepted (an SSE stream when `Accept: text/event-stream`)",
    },
    422: errorResponse("The Idempotency-Key was used with another body"),
    429: errorResponse("Too many of this tenant's jobs are queued or running (see Retry-After)"),
    ...commonErrors,
  },
});

/** The answer to a job-creating POST: the event stream, the batch (`?wait=true`), or the job's id. */
export async function answerSubmission(
  env: Env,
  tenantId: string,
  submission: Submission,
  options: { accept: string | undefined; wait: boolean },
): Promise<Response> {
  const jobId = submission.job.id;
  const coordinator = coordinatorFor(env, jobId);
  if (options.accept?.includes("text/event-stream")) {
    return openEventStream(env, jobId);
  }
  if (options.wait && (await coordinator.waitForEnd(limits(env).waitLimitSecs * 1000))) {
    const job = await getJob(env.DB, tenantId, jobId);
    if (job) return Response.json(batchView(job, await allResults(env.DB, jobId)), { status: 200 });
  }
  const status = submission.created ? "queued" : submission.job.status;
  const body = { job_id: jobId, status, total: submission.job.total, links: jobLinks(jobId) };
  return Response.json(body, { status: submission.created ? 202 : 200 });
}

export function mapRoutes() {
  return newRouter().openapi(mapRoute, async (c) => {
    const headers = c.req.valid("header");
    const submission = await submitMapJob(c.env, c.get("tenantId"), c.req.valid("json"), headers["idempotency-key"] ?? null);
    return answerSubmission(c.env, c.get("tenantId"), submission, { accept: headers.accept, wait: c.req.valid("query").wait === "true" });
  });
}
