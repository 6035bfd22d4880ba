/**
 * One route factory for every job-creating POST (`/v1/map`, `/v1/agentic-map`, `/v1/reduce`, …):
 * 202 with the job's id and links; `Accept: text/event-stream` → the job's event stream;
 * `?wait=true` → 200 once the job ends (v1 jobs: the batch; staged jobs: the job with its output),
 * 202 if it has not within WAIT_LIMIT_SECS; `?dry_run=true` → 200 with the estimate, nothing stored.
 * An `Idempotency-Key` replays the original job (200) or is 422 on another body.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { limits } from "../config";
import { getJob } from "../db/jobs";
import { openEventStream, type Submission, type SubmitAnswer } from "../jobs/submit";
import { withTraceparent } from "../jobs/trace-context";
import { jobLinks, jobView, warningsOf } from "../jobs/views";
import { jsonBody, newRouter } from "../lib/router";
import { jobCoordinator } from "../objects";
import { BatchSchema, EstimateSchema, JobSchema } from "../schemas/jobs";
import { JobCreatedSchema } from "../schemas/map";
import { bearerSecurity, commonErrors, errorResponse } from "../schemas/common";
import { eventStreamContent } from "../schemas/events";
import { allResults, v1BatchView } from "./jobs";
import { isV1 } from "../operators/registry";

const IDEMPOTENCY_KEY_MAX = 255;
const flag = (description: string) => z.enum(["true", "false"]).optional().openapi({ description });

export const submissionQuery = z.object({
  wait: flag("Wait for the job to end"),
  dry_run: flag("Validate and estimate only: nothing is stored or started"),
});
export const submissionHeaders = z.object({
  "idempotency-key": z.string().min(1).max(IDEMPOTENCY_KEY_MAX).optional(),
  accept: z.string().optional(),
  traceparent: z
    .string()
    .max(100)
    .optional()
    .openapi({ description: "W3C trace context: the job's trace is this one, its root span a child of this span (docs/observability.md)" }),
});

type Submit<B> = (env: Env, tenantId: string, body: B, idempotencyKey: string | null, dryRun: boolean) => Promise<SubmitAnswer>;

/** The answer to a job-creating POST: the event stream, the ended job (`?wait=true`), or the job's id. */
export async function answerSubmission(
  env: Env,
  tenantId: string,
  submission: Submission,
  options: { accept: string | undefined; wait: boolean },
): Promise<Response> {
  const jobId = submission.job.id;
  if (options.accept?.includes("text/event-stream")) return openEventStream(env, jobId);
  if (options.wait && (await jobCoordinator(env, jobId).waitForEnd(limits(env).waitLimitSecs * 1000))) {
    const job = await getJob(env.DB, tenantId, jobId);
    if (job && isV1(job.type)) return Response.json(v1BatchView(job, await allResults(env.DB, job)), { status: 200 });
    if (job) return Response.json(jobView(job), { status: 200 });
  }
  const status = submission.created ? "queued" : submission.job.status;
  const warnings = submission.created ? submission.job.warnings : warningsOf(submission.job);
  const body = { job_id: jobId, status, total: submission.job.total, links: jobLinks(jobId), warnings };
  return Response.json(body, { status: submission.created ? 202 : 200 });
}

interface OperatorRouteOptions<S extends z.ZodType> {
  path: string;
  operationId: string;
  summary: string;
  schema: S;
  submit: Submit<z.infer<S>>;
  /** Other media types the path takes, read by a middleware before this route (the pipelines' XML). */
  otherBodies?: Record<string, { schema: { type: "string"; description: string } }>;
  /** Answers of its own besides the shared ones, by status (an evaluation's 404 and 409). */
  otherErrors?: Record<number, string>;
}

export function operatorRoute<S extends z.ZodType>(options: OperatorRouteOptions<S>) {
  const body = jsonBody(options.schema);
  const route = createRoute({
    method: "post",
    path: options.path,
    operationId: options.operationId,
    tags: ["operators"],
    summary: options.summary,
    security: bearerSecurity,
    request: { body: { ...body, content: { ...body.content, ...options.otherBodies } }, query: submissionQuery, headers: submissionHeaders },
    responses: {
      200: {
        content: { "application/json": { schema: z.union([JobCreatedSchema, BatchSchema, JobSchema, EstimateSchema]) }, ...eventStreamContent },
        description:
          "An idempotent replay of the original job, the ended job (`?wait=true`), the estimate (`?dry_run=true`), or the job's event stream (`Accept: text/event-stream`; 200, as EventSource readers require)",
      },
      202: {
        content: { "application/json": { schema: JobCreatedSchema } },
        description: "The job was accepted",
      },
      422: errorResponse("The Idempotency-Key was used with another body, or the estimate is over `token_budget.total` (`token_budget_exceeded`)"),
      429: errorResponse("Too many of this tenant's jobs are queued or running (see Retry-After)"),
      ...Object.fromEntries(Object.entries(options.otherErrors ?? {}).map(([status, description]) => [status, errorResponse(description)])),
      ...commonErrors,
    },
  });
  return newRouter().openapi(route, async (c) => {
    // Validated by the route's schemas above; read plainly because the body schema is generic here.
    const tenantId = c.get("tenantId");
    const body = c.req.valid("json" as never) as z.infer<S>;
    const answer = await withTraceparent(c.req.header("traceparent"), () =>
      options.submit(c.env, tenantId, body, c.req.header("idempotency-key") ?? null, c.req.query("dry_run") === "true"),
    );
    if ("dryRun" in answer) return Response.json({ estimate: answer.dryRun }, { status: 200 });
    return answerSubmission(c.env, tenantId, answer, { accept: c.req.header("accept"), wait: c.req.query("wait") === "true" });
  });
}
