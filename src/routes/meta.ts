/** Open routes: health check, the OpenAPI 3.1 document, and the API reference page that renders it. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import { renderDocsPage, type OpenApiDocument } from "./docs-page";
import type { AppEnv } from "../app-env";
import { EVENT_DATA, eventSchemaName, type EventName } from "../schemas/events";

const API_INFO = {
  title: "Fanout API",
  version: "1.0.0",
  description:
    "Run LLM work over lists of items: one model call per item (`/v1/map`), one multi-turn agent per item " +
    "(`/v1/agentic-map`) or an ordered fold (`/v1/reduce`), with retries, validated structured output, token budgets, " +
    "dry-run estimates, recovery, live Server-Sent Events and signed webhooks.",
};

/** Builds the document from the app's registered routes (the same zod schemas that validate requests). */
export function openApiDocument(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "A tenant API key (`fo_…`).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The deployment's ADMIN_TOKEN.",
  });
  for (const [name, schema] of Object.entries(EVENT_DATA)) app.openAPIRegistry.register(eventSchemaName(name as EventName), schema);
  return app.getOpenAPI31Document({ openapi: "3.1.0", info: API_INFO });
}

export function metaRoutes(app: OpenAPIHono<AppEnv>) {
  let cached: ReturnType<typeof openApiDocument> | undefined;
  const doc = () => (cached ??= openApiDocument(app));
  return new Hono<AppEnv>()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/openapi.json", (c) => c.json(doc()))
    .get("/docs", (c) => c.html(renderDocsPage(doc() as unknown as OpenApiDocument)));
}
