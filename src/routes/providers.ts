/** Per-tenant provider credentials: PUT, list (no secrets), DELETE. */
import { createRoute, z } from "@hono/zod-openapi";
import { encryptionKey } from "../config";
import { deleteCredential, listCredentials, putCredential } from "../db/providers";
import { invalidRequest, notFound } from "../lib/errors";
import { jsonBody, jsonResponse, newRouter } from "../lib/router";
import { isKeyedProvider, isProvider, KEYED_PROVIDERS, unknownProvider } from "../llm/models";
import { ApiError } from "../lib/errors";
import { bearerSecurity, commonErrors, errorResponse, HttpUrlSchema } from "../schemas/common";
import { destinationProblem } from "../net/destination";
import { RateLimitsSchema } from "../schemas/pacing";

const CredentialBody = z
  .strictObject({
    api_key: z.string().min(1).max(4096),
    base_url: HttpUrlSchema.nullish(),
    rate_limits: RateLimitsSchema.nullish(),
  })
  .openapi("ProviderCredentialInput", { example: { api_key: "sk-...", base_url: null, rate_limits: { "*": { rpm: 500, tpm: 200_000 } } } });

const CredentialView = z
  .object({ provider: z.string(), base_url: z.string().nullable(), key_last4: z.string(), rate_limits: RateLimitsSchema.nullable() })
  .openapi("ProviderCredential");

const ProviderParam = z.object({
  provider: z.string().openapi({ description: `One of ${KEYED_PROVIDERS.join(", ")}` }),
});

const putRoute = createRoute({
  method: "put",
  path: "/{provider}",
  operationId: "putProviderCredential",
  tags: ["providers"],
  summary: "Store this tenant's credential for a provider (encrypted at rest, never returned)",
  security: bearerSecurity,
  request: { params: ProviderParam, body: jsonBody(CredentialBody) },
  responses: { 200: jsonResponse(CredentialView, "Stored"), ...commonErrors },
});

const listRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "listProviderCredentials",
  tags: ["providers"],
  summary: "List this tenant's provider credentials (no secrets)",
  security: bearerSecurity,
  responses: {
    200: jsonResponse(z.object({ providers: z.array(CredentialView) }), "The credentials"),
    ...commonErrors,
  },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/{provider}",
  operationId: "deleteProviderCredential",
  tags: ["providers"],
  summary: "Delete this tenant's credential for a provider",
  security: bearerSecurity,
  request: { params: ProviderParam },
  responses: { 204: { description: "Deleted" }, 404: errorResponse("No credential stored"), ...commonErrors },
});

export function providerRoutes() {
  return newRouter()
    .openapi(putRoute, async (c) => {
      const { provider } = c.req.valid("param");
      if (isProvider(provider) && !isKeyedProvider(provider)) {
        throw new ApiError(400, "invalid_request", `${provider} uses the deployment's binding and takes no credential.`, {
          details: [{ path: "provider", message: "takes no credential" }],
        });
      }
      if (!isKeyedProvider(provider)) throw unknownProvider(provider, "provider");
      const body = c.req.valid("json");
      const urlProblem = body.base_url ? destinationProblem(c.env, body.base_url) : null;
      if (urlProblem) throw invalidRequest("The base_url is not an allowed destination.", [{ path: "base_url", message: urlProblem }]);
      const view = await putCredential(
        c.env.DB,
        encryptionKey(c.env),
        c.get("tenantId"),
        provider,
        body.api_key,
        body.base_url ?? null,
        body.rate_limits ?? null,
      );
      return c.json(view, 200);
    })
    .openapi(listRoute, async (c) => c.json({ providers: await listCredentials(c.env.DB, c.get("tenantId")) }, 200))
    .openapi(deleteRoute, async (c) => {
      const { provider } = c.req.valid("param");
      if (!(await deleteCredential(c.env.DB, c.get("tenantId"), provider))) throw notFound("credential");
      return c.body(null, 204);
    });
}
