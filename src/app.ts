/**
 * The Hono application: error mapping, body limits, auth, and the routes of every resource.
 * One `onError` writes every error in the contract's envelope; unknown errors become a generic
 * 500 that is logged, never echoed.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { limits } from "./config";
import { ApiError, errorBody, InputError, unsupportedMediaType } from "./lib/errors";
import { newRouter } from "./lib/router";
import { requireAdmin, requireApiKey } from "./lib/auth";
import { adminRoutes } from "./routes/admin";
import { providerRoutes } from "./routes/providers";
import { telemetryRoutes } from "./routes/telemetry";
import { metaRoutes } from "./routes/meta";
import { jobRoutes } from "./routes/jobs";
import { operatorRoutes } from "./routes/operators";
import { webhookRoutes } from "./routes/webhooks";
import { sessionRoutes } from "./routes/sessions";
import type { AppEnv } from "./app-env";
import { refuseDeepJson, WITH_BODY } from "./lib/body-checks";
import { dashboardRoutes } from "./dashboard/routes";

function toErrorResponse(caught: unknown): { status: ApiError["status"]; body: object; headers: Record<string, string> } {
  // The OpenAPI layer's own 415 (a route's body without a JSON content type) is ours too.
  const err = caught instanceof HTTPException && caught.status === 415 ? unsupportedMediaType() : caught;
  if (err instanceof ApiError) {
    return { status: err.status, body: errorBody(err.code, err.message, err.details), headers: err.headers };
  }
  if (err instanceof InputError) return { status: 400, body: errorBody(err.code, err.message, err.details), headers: {} };
  if (err instanceof HTTPException && err.message.startsWith("Malformed JSON")) {
    return { status: 400, body: errorBody("invalid_json", "The request body is not valid JSON."), headers: {} };
  }
  console.error("unhandled error", err);
  return { status: 500, body: errorBody("internal", "An internal error occurred."), headers: {} };
}

/** Methods served at each route pattern, so an unmatched method gets 405 rather than 404. */
function allowedMethods(app: OpenAPIHono<AppEnv>, path: string): string[] {
  const methods = new Set<string>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    const pattern = new RegExp(`^${route.path.replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*")}$`);
    if (pattern.test(path)) methods.add(route.method);
  }
  return [...methods];
}

export function buildApp(): OpenAPIHono<AppEnv> {
  const app = newRouter();

  app.onError((err, c) => {
    const { status, body, headers } = toErrorResponse(err);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    return c.json(body, status);
  });

  app.notFound((c) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return c.json(errorBody("method_not_allowed", `${c.req.method} is not allowed here.`), 405);
    }
    return c.json(errorBody("not_found", "No such route."), 404);
  });

  app.use("/v1/*", async (c, next) =>
    !WITH_BODY.has(c.req.method)
      ? next()
      : bodyLimit({
          maxSize: limits(c.env).maxRequestBytes,
          onError: () => {
            throw new ApiError(413, "payload_too_large", "The request body is too large.", {
              details: [{ path: "(body)", message: `at most ${limits(c.env).maxRequestBytes} bytes` }],
            });
          },
        })(c, next),
  );
  app.use("/v1/admin/*", requireAdmin);
  app.use("/v1/*", async (c, next) => (c.req.path.startsWith("/v1/admin/") ? next() : requireApiKey(c, next)));
  app.use("/v1/*", refuseDeepJson);

  app.route("/", metaRoutes(app));
  app.route("/", dashboardRoutes());
  app.route("/v1/admin", adminRoutes());
  app.route("/v1/providers", providerRoutes());
  app.route("/v1/telemetry", telemetryRoutes());
  app.route("/v1", operatorRoutes());
  app.route("/v1", sessionRoutes());
  app.route("/v1/jobs", jobRoutes());
  app.route("/v1", webhookRoutes());
  return app;
}
