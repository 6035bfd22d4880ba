/** Open routes: health check, the OpenAPI 3.1 document, and the API reference page that renders it. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { registerStepSchemas } from "../operators/pipeline/step-schema";
import { Hono } from "hono";
import { renderDocsPage, type OpenApiDocument } from "./docs-page";
import type { AppEnv } from "../app-env";
import { jobEventSchema } from "../schemas/events";
import { WITH_BODY } from "../lib/body-checks";

const API_INFO = {
  title: "Fanout API",
  version: "1.0.0",
  description:
    "Run LLM work over lists of items: one model call per item (`/v1/map`), one multi-turn agent per item " +
    "(`/v1/agentic-map`), an ordered fold (`/v1/reduce`), a corpus map-reduce (`/v1/map-reduce`), a pipeline of steps " +
    "(`/v1/pipelines`), and the semantic operators: keep the items that match (`/v1/filter`), label them " +
    "(`/v1/classify`), order them (`/v1/rank`) and find the records that are the same entity (`/v1/resolve`) — with " +
    "retries, validated structured output, token budgets, dry-run estimates, recovery, live Server-Sent Events and " +
    "signed webhooks.",
  license: { name: "MIT", identifier: "MIT" },
};

const TAGS = [
  { name: "operators", description: "Submit a job: one route per operator, and the agentic jobs' sessions" },
  { name: "jobs", description: "Follow, read, cancel, recover, resume and delete jobs" },
  { name: "webhooks", description: "Webhook signing secrets and deliveries" },
  { name: "providers", description: "This tenant's own model provider credentials" },
  { name: "admin", description: "Tenants and API keys (the deployment's ADMIN_TOKEN)" },
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the generated document is walked as JSON
type Json = Record<string, any>;

/**
 * Drops the error answers an operation cannot give: 413 and 415 come from reading a body, which
 * only the WITH_BODY methods do (the same set the body checks use); 400 needs something to
 * validate (a body, a query or header parameter, or a path parameter with a constraint).
 */
function pruneImpossibleErrors(doc: Json): void {
  for (const item of Object.values(doc.paths ?? {}) as Json[]) {
    for (const [method, op] of Object.entries(item) as [string, Json][]) {
      if (WITH_BODY.has(method.toUpperCase())) continue;
      delete op.responses["413"];
      delete op.responses["415"];
      const params = (op.parameters ?? []) as Json[];
      const validated = params.some((p) => p.in !== "path" || Object.keys(p.schema ?? {}).some((k) => !["type", "example", "description"].includes(k)));
      if (!validated) delete op.responses["400"];
    }
  }
}

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
  app.openAPIRegistry.register("JobEvent", jobEventSchema());
  registerStepSchemas(app.openAPIRegistry); // what a pipeline's `steps` refers to
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: API_INFO,
    tags: TAGS,
    servers: [{ url: "/", description: "The deployment that serves this document" }],
  });
  pruneImpossibleErrors(doc as Json);
  return doc;
}

/** The document as served: its server is the origin it was fetched from, so a generated client points at this deployment. */
export function servedDocument(doc: ReturnType<typeof openApiDocument>, origin: string) {
  return { ...doc, servers: [{ url: origin, description: "This deployment" }] };
}

export function metaRoutes(app: OpenAPIHono<AppEnv>) {
  let cached: ReturnType<typeof openApiDocument> | undefined;
  const doc = () => (cached ??= openApiDocument(app));
  return new Hono<AppEnv>()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/openapi.json", (c) => c.json(servedDocument(doc(), new URL(c.req.url).origin)))
    .get("/docs", (c) => c.html(renderDocsPage(doc() as unknown as OpenApiDocument)));
}
