/** Per-tenant provider credentials: PUT (one endpoint, or a pool of deployments), list (no secrets), DELETE. */
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

/** The most deployments one pool holds: each is a pacer, a circuit and a setup per model of a job. */
export const MAX_DEPLOYMENTS = 8;

const DeploymentBody = z
  .strictObject({
    base_url: HttpUrlSchema.nullish().openapi({
      description: "The deployment's endpoint (an Azure region's, a gateway's, a replica's); null: the provider's own",
    }),
    api_key: z.string().min(1).max(4096),
    weight: z.number().int().min(1).max(100).default(1).openapi({ description: "Its share of the calls, against the other deployments' weights" }),
    rate_limits: RateLimitsSchema.nullish(),
  })
  .openapi("ProviderDeploymentInput");

const CredentialBody = z
  .strictObject({
    api_key: z.string().min(1).max(4096).optional(),
    base_url: HttpUrlSchema.nullish(),
    rate_limits: RateLimitsSchema.nullish(),
    deployments: z
      .array(DeploymentBody)
      .min(1)
      .max(MAX_DEPLOYMENTS)
      .optional()
      .openapi({
        description: `A pool (contract v4): calls spread by weight, each deployment paced by its own limits and skipped while its circuit is open; up to ${MAX_DEPLOYMENTS}. Instead of api_key, base_url and rate_limits`,
      }),
  })
  .superRefine((body, ctx) => {
    if (body.deployments && (body.api_key !== undefined || body.base_url != null || body.rate_limits != null)) {
      ctx.addIssue({
        code: "custom",
        path: ["deployments"],
        message: "a pool gives each deployment its api_key, base_url and rate_limits: not the credential's own too",
      });
    } else if (!body.deployments && body.api_key === undefined) {
      ctx.addIssue({ code: "custom", path: ["api_key"], message: "give api_key, or deployments" });
    }
  })
  .openapi("ProviderCredentialInput", { example: { api_key: "sk-...", base_url: null, rate_limits: { "*": { rpm: 500, tpm: 200_000 } } } });

const DeploymentView = z
  .object({
    base_url: z.string().nullable(),
    key_last4: z.string(),
    weight: z.number().int(),
    rate_limits: RateLimitsSchema.nullable(),
    circuit: z.enum(["closed", "open", "half_open"]).optional().openapi({
      description:
        "As the tenant's jobs last saw it change: open when outage answers in a row took it out (its calls go to the other deployments), half_open once its 30 s cool-down is over (the next call probes it), closed when an answer brought it back (or it never opened). In the list only",
    }),
    circuit_model: z.string().nullable().optional().openapi({ description: "The model whose calls last changed its circuit" }),
    circuit_changed_at: z.string().nullable().optional().openapi({ description: "When its circuit last changed" }),
  })
  .openapi("ProviderDeployment");

const CredentialView = z
  .object({
    provider: z.string(),
    base_url: z.string().nullable(),
    key_last4: z.string(),
    rate_limits: RateLimitsSchema.nullable(),
    deployments: z
      .array(DeploymentView)
      .optional()
      .openapi({ description: "A pool's deployments, in order (the first is also the credential's own endpoint)" }),
  })
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
      const urls = body.deployments
        ? body.deployments.map((d, i) => [`deployments[${i}].base_url`, d.base_url] as const)
        : [["base_url", body.base_url] as const];
      const urlProblems = urls.flatMap(([path, url]) => {
        const message = url ? destinationProblem(c.env, url) : null;
        return message ? [{ path, message }] : [];
      });
      if (urlProblems.length > 0) throw invalidRequest("A base_url is not an allowed destination.", urlProblems);
      const deployments = body.deployments?.map((d) => ({
        base_url: d.base_url ?? null,
        api_key: d.api_key,
        weight: d.weight,
        rate_limits: d.rate_limits ?? null,
      }));
      const view = await putCredential(
        c.env.DB,
        encryptionKey(c.env),
        c.get("tenantId"),
        provider,
        body.api_key ?? "",
        body.base_url ?? null,
        body.rate_limits ?? null,
        deployments ?? null,
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
