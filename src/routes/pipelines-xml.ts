/**
 * POST /v1/pipelines with `Content-Type: application/xml`: the reference spec's XML task format,
 * read (400 `invalid_xml` when malformed), turned into the JSON body (`pipelineFromXml`) and
 * submitted exactly as a JSON pipeline; `?dry_run`, `?wait`, `Accept: text/event-stream` and
 * `Idempotency-Key` as for JSON. Other content types go on to the JSON route.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { isXml } from "../lib/body-checks";
import { ApiError, invalidRequest } from "../lib/errors";
import { pipelineFromXml } from "../operators/pipeline/from-xml";
import { PipelineRequestSchema } from "../operators/pipeline/schema";
import { submitPipelineJob } from "../operators/pipeline/submit";
import { withTraceparent } from "../jobs/trace-context";
import { readXml } from "../operators/pipeline/xml";
import { answerSubmission } from "./operator-route";

export const pipelinesFromXml = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "POST" || !isXml(c.req.header("content-type"))) return next();
  const read = readXml(await c.req.text());
  if (!read.ok)
    throw new ApiError(400, "invalid_xml", `The body is not well-formed XML: ${read.message}`, { details: [{ path: "(body)", message: read.message }] });
  const parsed = PipelineRequestSchema.safeParse(pipelineFromXml(read.root, c.req.query()));
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }));
    throw invalidRequest(`The pipeline is not valid: ${details[0]?.path}: ${details[0]?.message}`, details);
  }
  const tenantId = c.get("tenantId");
  const answer = await withTraceparent(c.req.header("traceparent"), () =>
    submitPipelineJob(c.env, tenantId, parsed.data, c.req.header("idempotency-key") ?? null, c.req.query("dry_run") === "true"),
  );
  if ("dryRun" in answer) return Response.json({ estimate: answer.dryRun }, { status: 200 });
  return answerSubmission(c.env, tenantId, answer, { accept: c.req.header("accept"), wait: c.req.query("wait") === "true" });
});
