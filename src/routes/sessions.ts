/** The sub-sessions of agentic jobs: GET /v1/sessions/{id} and GET /v1/jobs/{id}/sessions (POST /v1/agentic-map is ./operators.ts). */
import { createRoute, z } from "@hono/zod-openapi";
import { getJob } from "../db/jobs";
import { childSessions, getSession, listJobSessions, sessionMessages, type SessionRow } from "../db/sessions";
import { notFound } from "../lib/errors";
import { jsonResponse, newRouter } from "../lib/router";
import { SessionSchema, SessionSummarySchema } from "../schemas/agentic";
import { JobIdParam } from "../schemas/jobs";
import { bearerSecurity, commonErrors, errorResponse } from "../schemas/common";

const sessionRoute = createRoute({
  method: "get",
  path: "/sessions/{session_id}",
  operationId: "getSession",
  tags: ["operators"],
  summary: "A sub-session's full history (the prompt, replies, tool calls and tool results) and its subtasks' sessions (`children`)",
  security: bearerSecurity,
  request: { params: z.object({ session_id: z.string() }) },
  responses: { 200: jsonResponse(SessionSchema, "The session"), 404: errorResponse("No such session"), ...commonErrors },
});

const jobSessionsRoute = createRoute({
  method: "get",
  path: "/jobs/{job_id}/sessions",
  operationId: "listJobSessions",
  tags: ["operators"],
  summary: "The sub-sessions of an agentic job (their progress, not their messages), by item index",
  security: bearerSecurity,
  request: { params: JobIdParam },
  responses: {
    200: jsonResponse(z.object({ sessions: z.array(SessionSummarySchema) }), "The sessions"),
    404: errorResponse("No such job"),
    ...commonErrors,
  },
});

function sessionSummary(session: SessionRow) {
  return {
    session_id: session.id,
    job_id: session.job_id,
    index: session.idx,
    parent_session_id: session.parent_id,
    depth: session.depth,
    status: session.status as "running" | "completed" | "failed",
    stop_reason: session.stop_reason,
    turns: session.turns,
    compactions: session.compactions,
    token_usage: {
      input_tokens: session.input_tokens,
      output_tokens: session.output_tokens,
      total_tokens: session.input_tokens + session.output_tokens,
    },
  };
}

export function sessionRoutes() {
  return newRouter()
    .openapi(sessionRoute, async (c) => {
      const session = await getSession(c.env.DB, c.get("tenantId"), c.req.valid("param").session_id);
      if (!session) throw notFound("session");
      const [messages, children] = await Promise.all([sessionMessages(c.env.DB, session.id), childSessions(c.env.DB, session.id)]);
      return c.json({ ...sessionSummary(session), children, messages }, 200);
    })
    .openapi(jobSessionsRoute, async (c) => {
      const job = await getJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      if (!job) throw notFound("job");
      return c.json({ sessions: (await listJobSessions(c.env.DB, job.id)).map(sessionSummary) }, 200);
    });
}
