/** Open routes: health check, the OpenAPI 3.1 document, and the API reference page that renders it. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import { renderDocsPage, type OpenApiDocument } from "./docs-page";
import type { AppEnv } from "../app-env";

const API_INFO = {
  title: "Fanout API",
  version: "1.0.0",
  description:
    "Run LLM work over lists of items: one model call per item (`/v1/map`) or one multi-turn agent per item, " +
    "with retries, validated structured output, live Server-Sent Events and signed webhooks.",
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
