/** Admin routes (ADMIN_TOKEN): create tenants, issue and revoke their API keys. */
import { createRoute, z } from "@hono/zod-openapi";
import { jsonBody, jsonResponse, newRouter } from "../lib/router";
import { createKey, createTenant, revokeKey, tenantExists } from "../db/tenants";
import { notFound } from "../lib/errors";
import { adminSecurity, commonErrors, errorResponse } from "../schemas/common";

const NameBody = z.strictObject({ name: z.string().trim().min(1).max(200) });

const TenantSchema = z.object({ id: z.string().openapi({ example: "ten_q3v5..." }), name: z.string(), created_at: z.string() }).openapi("Tenant");

const CreatedKeySchema = z
  .object({
    id: z.string(),
    key: z.string().openapi({ description: "The secret key. Shown once; only its hash is stored." }),
    prefix: z.string(),
    created_at: z.string(),
  })
  .openapi("CreatedApiKey");

const createTenantRoute = createRoute({
  method: "post",
  path: "/tenants",
  operationId: "createTenant",
  tags: ["admin"],
  summary: "Create a tenant",
  security: adminSecurity,
  request: { body: jsonBody(NameBody.openapi({ example: { name: "acme" } })) },
  responses: { 201: jsonResponse(TenantSchema, "Created"), ...commonErrors },
});

const createKeyRoute = createRoute({
  method: "post",
  path: "/tenants/{tenant_id}/keys",
  operationId: "createApiKey",
  tags: ["admin"],
  summary: "Issue an API key for a tenant",
  security: adminSecurity,
  request: {
    params: z.object({ tenant_id: z.string() }),
    body: jsonBody(NameBody.openapi({ example: { name: "ci" } })),
  },
  responses: {
    201: jsonResponse(CreatedKeySchema, "Created"),
    404: errorResponse("No such tenant"),
    ...commonErrors,
  },
});

const revokeKeyRoute = createRoute({
  method: "delete",
  path: "/keys/{key_id}",
  operationId: "revokeApiKey",
  tags: ["admin"],
  summary: "Revoke an API key (it stops working at once)",
  security: adminSecurity,
  request: { params: z.object({ key_id: z.string() }) },
  responses: { 204: { description: "Revoked" }, 404: errorResponse("No such live key"), ...commonErrors },
});

export function adminRoutes() {
  return newRouter()
    .openapi(createTenantRoute, async (c) => {
      const tenant = await createTenant(c.env.DB, c.req.valid("json").name);
      return c.json(tenant, 201);
    })
    .openapi(createKeyRoute, async (c) => {
      const { tenant_id } = c.req.valid("param");
      if (!(await tenantExists(c.env.DB, tenant_id))) throw notFound("tenant");
      const key = await createKey(c.env.DB, tenant_id, c.req.valid("json").name);
      return c.json(key, 201);
    })
    .openapi(revokeKeyRoute, async (c) => {
      if (!(await revokeKey(c.env.DB, c.req.valid("param").key_id))) throw notFound("key");
      return c.body(null, 204);
    });
}
