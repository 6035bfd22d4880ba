/**
 * A tenant's trace collector (contract v4, "Traces (OpenTelemetry)"): PUT, GET (no header values,
 * the last export's outcome), DELETE. The endpoint is a tenant's destination: the destination policy
 * applies when it is set and when spans are sent (src/engine/tracing.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { encryptionKey } from "../config";
import { deleteTelemetry, putTelemetry, telemetryView } from "../db/telemetry";
import { invalidRequest, notFound } from "../lib/errors";
import { jsonBody, jsonResponse, newRouter } from "../lib/router";
import { bearerSecurity, commonErrors, errorResponse, HttpUrlSchema } from "../schemas/common";
import { destinationProblem } from "../net/destination";
import { PROTOTYPE_NAMES } from "../lib/records";

const MAX_HEADERS = 16;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/; // an HTTP token

const TelemetryBody = z
  .strictObject({
    otlp_endpoint: HttpUrlSchema.openapi({ description: "The collector's OTLP/HTTP traces URL (…/v1/traces): spans are POSTed there as OTLP JSON" }),
    headers: z
      .record(z.string(), z.string().max(4_096))
      .default({})
      .refine((h) => Object.keys(h).length <= MAX_HEADERS, { message: `at most ${MAX_HEADERS} headers` })
      .refine((h) => Object.keys(h).every((name) => HEADER_NAME.test(name) && !PROTOTYPE_NAMES.has(name)), { message: "header names are HTTP tokens" })
      .openapi({ description: "Sent with every export (a collector's API key): sealed at rest, never shown again", example: { authorization: "Basic …" } }),
    capture_content: z.boolean().default(false).openapi({ description: "Put prompts and answers in the model-call spans (off: only sizes and counts)" }),
  })
  .openapi("TelemetryInput");

const TelemetryView = z
  .object({
    otlp_endpoint: z.string(),
    header_names: z.array(z.string()).openapi({ description: "The headers' names (their values are never shown)" }),
    capture_content: z.boolean(),
    last_export: z
      .object({
        at: z.string(),
        status: z.number().int().nullable().openapi({ description: "The collector's HTTP status; null: no answer" }),
        error: z.string().nullable(),
        spans: z.number().int().openapi({ description: "Spans in that export" }),
      })
      .nullable()
      .openapi({ description: "The last export's outcome (null: none since the collector was set)" }),
  })
  .openapi("Telemetry");

const tag = { tags: ["telemetry"], security: bearerSecurity };

const putRoute = createRoute({
  ...tag,
  method: "put",
  path: "/",
  operationId: "putTelemetry",
  summary: "Send this tenant's job traces (OTLP/HTTP JSON, the GenAI conventions) to a collector",
  request: { body: jsonBody(TelemetryBody) },
  responses: { 200: jsonResponse(TelemetryView, "Stored"), ...commonErrors },
});

const getRoute = createRoute({
  ...tag,
  method: "get",
  path: "/",
  operationId: "getTelemetry",
  summary: "This tenant's collector (no header values) and its last export",
  responses: { 200: jsonResponse(TelemetryView, "The collector"), 404: errorResponse("No collector set"), ...commonErrors },
});

const deleteRoute = createRoute({
  ...tag,
  method: "delete",
  path: "/",
  operationId: "deleteTelemetry",
  summary: "Stop sending this tenant's traces",
  responses: { 204: { description: "Deleted" }, 404: errorResponse("No collector set"), ...commonErrors },
});

export function telemetryRoutes() {
  return newRouter()
    .openapi(putRoute, async (c) => {
      const body = c.req.valid("json");
      const problem = destinationProblem(c.env, body.otlp_endpoint);
      if (problem) throw invalidRequest("The otlp_endpoint is not an allowed destination.", [{ path: "otlp_endpoint", message: problem }]);
      const view = await putTelemetry(c.env.DB, encryptionKey(c.env), c.get("tenantId"), {
        endpoint: body.otlp_endpoint,
        headers: body.headers,
        captureContent: body.capture_content,
      });
      return c.json(view, 200);
    })
    .openapi(getRoute, async (c) => {
      const view = await telemetryView(c.env.DB, c.get("tenantId"));
      if (!view) throw notFound("telemetry");
      return c.json(view, 200);
    })
    .openapi(deleteRoute, async (c) => {
      if (!(await deleteTelemetry(c.env.DB, c.get("tenantId")))) throw notFound("telemetry");
      return c.body(null, 204);
    });
}
