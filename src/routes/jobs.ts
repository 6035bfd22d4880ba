/** Job routes: list, get, delete, results (per stage, two orders, status filter, cursor pages), batch, events, cancel, recover, resume. */
import { createRoute, z } from "@hono/zod-openapi";
import { evaluationsOf, getJob, listAllResults, listJobs, listResults, type JobRow, type ResultFlagQuery, type StoredResult } from "../db/jobs";
import { moduleOf, typesWithFlag } from "../operators/registry";
import type { OperatorViews } from "../operators/define";
import { openEventStream } from "../jobs/submit";
import { isTerminal } from "../engine/types";
import { decodeCursor, encodeCursor, jobView } from "../jobs/views";
import { ApiError, invalidRequest, notFound } from "../lib/errors";
import { jsonResponse, newRouter, optionalJsonBody } from "../lib/router";
import { jobCoordinator } from "../objects";
import {
  AuditSchema,
  BatchSchema,
  JobIdParam,
  JobListQuery,
  JobListSchema,
  JobSchema,
  RecoverAnswerSchema,
  RecoverRequestSchema,
  ResultPageSchema,
  ResultsQuery,
  ResumeRequestSchema,
  type ItemResult,
} from "../schemas/jobs";
import { eventStreamContent } from "../schemas/events";
import { bearerSecurity, commonErrors, errorResponse, zodIssues } from "../schemas/common";
import { deleteJob } from "../jobs/delete";

const BATCH_PAGE = 1000;
const jobNotFound = { 404: errorResponse("No such job (or not this tenant's)") };

const route = <P extends string>(method: "get" | "post" | "delete", path: P, operationId: string, summary: string) => ({
  method,
  path,
  operationId,
  tags: ["jobs"],
  summary,
  security: bearerSecurity,
});

const listRoute = createRoute({
  ...route("get", "/", "listJobs", "List this tenant's jobs, newest first"),
  request: { query: JobListQuery },
  responses: { 200: jsonResponse(JobListSchema, "A page of jobs"), ...commonErrors },
});

const getRoute = createRoute({
  ...route("get", "/{job_id}", "getJob", "Get a job's status and counters"),
  request: { params: JobIdParam },
  responses: { 200: jsonResponse(JobSchema, "The job"), ...jobNotFound, ...commonErrors },
});

const resultsRoute = createRoute({
  ...route("get", "/{job_id}/results", "listJobResults", "Page through a job's results"),
  request: { params: JobIdParam, query: ResultsQuery },
  responses: { 200: jsonResponse(ResultPageSchema, "A page of results"), ...jobNotFound, ...commonErrors },
});

const batchRoute = createRoute({
  ...route("get", "/{job_id}/batch", "getJobBatch", "All results of a finished job, split into successes and failures"),
  request: { params: JobIdParam },
  responses: {
    200: jsonResponse(BatchSchema, "The batch"),
    409: errorResponse("The job is still running"),
    ...jobNotFound,
    ...commonErrors,
  },
});

const eventsRoute = createRoute({
  ...route("get", "/{job_id}/events", "streamJobEvents", "The job's Server-Sent Events: replayed from the start, then live"),
  description:
    "Every event of the job (JobEvent: `MAP_STARTED` first, `MAP_COMPLETED` last, stage, task, subtask, pause and " +
    "concurrency events between) with ids 1, 2, 3…; send `Last-Event-ID: N` to get only the events after N. A `: keepalive` " +
    "comment comes at least every `SSE_KEEPALIVE_SECS` (15 s by default); the stream closes after `MAP_COMPLETED`.",
  request: { params: JobIdParam, headers: z.object({ "last-event-id": z.string().optional() }) },
  responses: {
    200: { content: eventStreamContent, description: "An SSE stream of JobEvent" },
    ...jobNotFound,
    ...commonErrors,
  },
});

const cancelRoute = createRoute({
  ...route("post", "/{job_id}/cancel", "cancelJob", "Cancel a job: no new item starts; finished results are kept"),
  request: { params: JobIdParam },
  responses: { 202: jsonResponse(JobSchema, "Cancelled (or already ended)"), ...jobNotFound, ...commonErrors },
});

const deleteRoute = createRoute({
  ...route("delete", "/{job_id}", "deleteJob", "Delete an ended job: its results, sessions, events, webhook deliveries and stored state"),
  description:
    "Only an ended job (completed, failed or cancelled) can be deleted; cancel a running one first. Ended jobs are also deleted `JOB_RETENTION_DAYS` (default 30) after they end.",
  request: { params: JobIdParam },
  responses: {
    204: { description: "Deleted" },
    409: errorResponse("The job has not ended (queued, running or paused)"),
    ...jobNotFound,
    ...commonErrors,
  },
});

const auditRoute = createRoute({
  ...route("get", "/{job_id}/audit", "getJobAudit", "A map-reduce job's trail: every call, the documents behind it and the calls that fed it"),
  request: { params: JobIdParam },
  responses: { 200: jsonResponse(AuditSchema, "The audit"), 404: errorResponse("No such job, or not a map-reduce job"), ...commonErrors },
});

const recoverRoute = createRoute({
  ...route("post", "/{job_id}/recover", "recoverJob", "Re-run the failed and unfinished tasks of an ended job; finished tasks are kept"),
  description:
    "For a job that ended `failed` or `cancelled`, or `completed` with failed tasks. Same job id and event stream; each re-run task " +
    "starts a fresh attempt count; no finished task runs again. 409 while the job runs or is paused, or when nothing is left to re-run.",
  // The body is optional (an empty POST means no overrides): declared here, parsed in the handler.
  request: { params: JobIdParam, body: optionalJsonBody("RecoverRequest") },
  responses: {
    202: jsonResponse(RecoverAnswerSchema, "The job is running again"),
    409: errorResponse("The job is running or paused, or has nothing to re-run"),
    ...jobNotFound,
    ...commonErrors,
  },
});

const resumeRoute = createRoute({
  ...route("post", "/{job_id}/resume", "resumeJob", "Resume a paused job, with a larger token budget"),
  request: { params: JobIdParam, body: optionalJsonBody("ResumeRequest") },
  responses: {
    202: jsonResponse(JobSchema, "The job goes on where it stopped"),
    409: errorResponse("The job is not paused"),
    ...jobNotFound,
    ...commonErrors,
  },
});

/** A body that may be absent (an empty POST is `{}`); present, it must be valid JSON matching `schema`. */
function optionalBody<T extends z.ZodType>(text: string, schema: T): z.infer<T> {
  let value: unknown = {};
  if (text.trim() !== "") {
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(400, "invalid_json", "The request body is not valid JSON.");
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidRequest("The request is invalid.", zodIssues(parsed.error));
  return parsed.data;
}

async function requireJob(db: D1Database, tenantId: string, jobId: string): Promise<JobRow> {
  const job = await getJob(db, tenantId, jobId);
  if (!job) throw notFound("job");
  return job;
}

function cursorNumber(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const [value] = decodeCursor(cursor);
  if (typeof value !== "number") throw new ApiError(400, "invalid_request", "The cursor is not valid.");
  return value;
}

/** Every result of the job's main stage, in input order. */
export async function allResults(db: D1Database, job: JobRow): Promise<StoredResult[]> {
  const all: StoredResult[] = [];
  let after: number | undefined;
  for (;;) {
    const page = await listResults(db, job.id, { stage: job.main_stage, order: "input", limit: BATCH_PAGE, after });
    all.push(...page.results);
    const last = page.keys.at(-1);
    if (page.results.length < BATCH_PAGE || last === undefined) return all;
    after = last;
  }
}

/** A v1 job (map, agentic map) as ?wait=true and its batch GET answer it once it ended: every result inline. */
export function v1BatchView(job: JobRow, stored: StoredResult[]) {
  const results = stored as ItemResult[]; // each stored in its operator's result shape
  return {
    job_id: job.id,
    successes: results.filter((r) => r.success),
    failures: results.filter((r) => !r.success),
    total: job.total,
    total_attempts: job.total_attempts,
  };
}

/** The boolean filters asked for, as the job's operator declares them; 400 for one it does not answer. */
function resultFlags(type: string, views: OperatorViews | undefined, asked: Record<string, string | undefined>): ResultFlagQuery[] {
  return Object.entries(asked).flatMap(([name, value]) => {
    if (value === undefined) return [];
    const flag = views?.resultFlags?.find((f) => f.name === name);
    if (!flag)
      throw invalidRequest(`\`${name}\` applies to ${typesWithFlag(name).join(", ")} jobs only.`, [
        { path: name, message: `a ${type} job's results have no \`${name}\`` },
      ]);
    return [{ path: flag.path, value: value === "true", succeededOnly: flag.succeededOnly ?? false }];
  });
}

export function jobRoutes() {
  const router = newRouter();
  router.openAPIRegistry.register("RecoverRequest", RecoverRequestSchema);
  router.openAPIRegistry.register("ResumeRequest", ResumeRequestSchema);
  return router
    .openapi(listRoute, async (c) => {
      const { status, limit, cursor } = c.req.valid("query");
      let before: { createdMs: number; id: string } | undefined;
      if (cursor) {
        const [createdMs, id] = decodeCursor(cursor);
        if (typeof createdMs !== "number" || typeof id !== "string") throw new ApiError(400, "invalid_request", "The cursor is not valid.");
        before = { createdMs, id };
      }
      const rows = await listJobs(c.env.DB, c.get("tenantId"), { status, limit: limit + 1, before });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const next = rows.length > limit && last ? encodeCursor([last.created_ms, last.id]) : null;
      return c.json({ jobs: page.map(jobView), next_cursor: next }, 200);
    })
    .openapi(getRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      return c.json({ ...jobView(job), evaluations: await evaluationsOf(c.env.DB, job.tenant_id, job.id) }, 200);
    })
    .openapi(resultsRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      const { stage, order, status, limit, cursor, ...asked } = c.req.valid("query");
      const views = moduleOf(job.type)?.views;
      const flags = resultFlags(job.type, views, asked);
      const own = views?.stageList;
      if (own && stage === own.stage) return c.json({ results: (await own.list(c.env.DB, job)) as ItemResult[], next_cursor: null }, 200);
      const page = await listResults(c.env.DB, job.id, { stage: stage ?? job.main_stage, order, status, flags, limit: limit + 1, after: cursorNumber(cursor) });
      const lastKey = page.keys[limit - 1];
      const next = page.results.length > limit && lastKey !== undefined ? encodeCursor([lastKey]) : null;
      return c.json({ results: page.results.slice(0, limit) as ItemResult[], next_cursor: next }, 200);
    })
    .openapi(batchRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      if (!isTerminal(job.status)) throw new ApiError(409, "conflict", "The job has not ended yet; its batch is not ready.");
      return c.json(v1BatchView(job, await allResults(c.env.DB, job)), 200);
    })
    .openapi(eventsRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      return openEventStream(c.env, job.id, c.req.header("last-event-id"));
    })
    .openapi(deleteRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      if (!isTerminal(job.status)) throw new ApiError(409, "conflict", `The job is ${job.status}; cancel it first, then delete it.`);
      await deleteJob(c.env, job.id);
      return c.body(null, 204);
    })
    .openapi(cancelRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      if (!isTerminal(job.status)) await jobCoordinator(c.env, job.id).cancel();
      const current = (await getJob(c.env.DB, c.get("tenantId"), job.id)) ?? job;
      return c.json(jobView(current), 202);
    })
    .openapi(auditRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      const audit = moduleOf(job.type)?.views?.audit;
      if (!audit) throw new ApiError(404, "not_found", "Only map-reduce jobs have an audit.");
      return c.json(audit(await listAllResults(c.env.DB, job.id)) as z.infer<typeof AuditSchema>, 200);
    })
    .openapi(recoverRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      const o = optionalBody(await c.req.text(), RecoverRequestSchema);
      const answer = await jobCoordinator(c.env, job.id).recover({
        model: o.model ?? null,
        maxRetries: o.max_retries ?? null,
        timeoutMs: o.timeout_secs === undefined ? null : Math.round(o.timeout_secs * 1000),
        errorKinds: o.error_kinds ?? null,
        budget: o.token_budget ?? null,
      });
      if (!answer.ok) throw new ApiError(409, "conflict", answer.reason);
      return c.json({ job_id: job.id, status: "running" as const, recovering: answer.recovering }, 202);
    })
    .openapi(resumeRoute, async (c) => {
      const job = await requireJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      const o = optionalBody(await c.req.text(), ResumeRequestSchema);
      const answer = await jobCoordinator(c.env, job.id).resume(o.token_budget ?? null);
      if (!answer.ok) throw new ApiError(409, "conflict", answer.reason, answer.details ? { details: answer.details } : {});
      const current = (await getJob(c.env.DB, c.get("tenantId"), job.id)) ?? job;
      return c.json({ ...jobView(current), status: "running" as const, pause_reason: null }, 202);
    });
}
