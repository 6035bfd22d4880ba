/**
 * One model call for a tenant: resolve the endpoint (the tenant's stored credential, else the
 * deployment's environment), then dispatch to the provider's adapter.
 */
import { encryptionKey, readVar } from "../config";
import { getCredential, type ProviderCredential } from "../db/providers";
import { callAnthropic } from "./anthropic";
import { ProviderFailure } from "./errors";
import { callOpenAi } from "./openai";
import { callWorkersAi, type AiBinding } from "./workers-ai";
import { embedOpenAi, embedWorkersAi } from "./embeddings";
import { policyFetch } from "../net/destination";
import type { Provider } from "./models";
import type { EndpointData, ModelRequest, ModelResponse, ProviderEndpoint } from "./types";

const ENV_NAMES: Record<Exclude<Provider, "workers-ai">, { key: string; url: string }> = {
  openai: { key: "OPENAI_API_KEY", url: "OPENAI_BASE_URL" },
  anthropic: { key: "ANTHROPIC_API_KEY", url: "ANTHROPIC_BASE_URL" },
  "openai-compatible": { key: "OPENAI_COMPATIBLE_API_KEY", url: "OPENAI_COMPATIBLE_BASE_URL" },
};

/** Why a provider cannot be called for this tenant, or null when it can. */
export function endpointProblem(provider: Provider, endpoint: ProviderEndpoint | null, env: object): string | null {
  if (provider === "workers-ai") return (env as { AI?: unknown }).AI ? null : "Workers AI is not bound in this deployment";
  if (!endpoint) return null;
  if (provider === "openai-compatible" && !endpoint.baseUrl) {
    return "openai-compatible needs a base_url (PUT /v1/providers/openai-compatible or OPENAI_COMPATIBLE_BASE_URL)";
  }
  if (provider !== "openai-compatible" && !endpoint.apiKey) {
    return `no API key for ${provider} (PUT /v1/providers/${provider} or set ${ENV_NAMES[provider].key})`;
  }
  return null;
}

/** `deployment`: which of a pool's deployments (absent: the credential's own endpoint, a pool's first). */
export async function endpointData(env: Env, tenantId: string, provider: Provider, deployment = 0): Promise<EndpointData | null> {
  if (provider === "workers-ai") return null;
  return endpointOf(env, provider, await getCredential(env.DB, encryptionKey(env), tenantId, provider), deployment);
}

/** The endpoint of a tenant's stored credential (null: none stored) or of one of its pool's deployments, else the deployment's environment. */
export function endpointOf(env: Env, provider: Exclude<Provider, "workers-ai">, stored: ProviderCredential | null, deployment = 0): EndpointData {
  const pooled = deployment > 0 ? stored?.deployments?.[deployment] : undefined;
  if (pooled) return { apiKey: pooled.apiKey, baseUrl: pooled.baseUrl, policy: Boolean(pooled.baseUrl) };
  const names = ENV_NAMES[provider];
  return {
    apiKey: stored?.apiKey ?? readVar(env, names.key) ?? null,
    baseUrl: stored?.baseUrl ?? readVar(env, names.url) ?? null,
    policy: Boolean(stored?.baseUrl),
  };
}

export function endpointFrom(env: Env, data: EndpointData | null): ProviderEndpoint | null {
  if (!data) return null;
  const endpoint: ProviderEndpoint = { apiKey: data.apiKey, baseUrl: data.baseUrl };
  // A tenant's base URL is a tenant's destination; the deployment's own variables are trusted.
  if (data.policy) endpoint.fetch = policyFetch(env);
  return endpoint;
}

export async function resolveEndpoint(env: Env, tenantId: string, provider: Provider): Promise<ProviderEndpoint | null> {
  return endpointFrom(env, await endpointData(env, tenantId, provider));
}

export async function callModel(env: Env, request: ModelRequest, endpoint: ProviderEndpoint | null): Promise<ModelResponse> {
  const provider = request.model.provider;
  const problem = endpointProblem(provider, endpoint, env);
  if (problem) throw new ProviderFailure(problem, "permanent");
  if (request.embedding) {
    if (provider === "anthropic") throw new ProviderFailure("Anthropic has no embeddings API", "permanent");
    if (provider === "workers-ai") return embedWorkersAi(request, (env as { AI?: AiBinding }).AI);
    return embedOpenAi(request, endpoint ?? { apiKey: null, baseUrl: null });
  }
  switch (provider) {
    case "openai":
      return callOpenAi(request, endpoint ?? { apiKey: null, baseUrl: null }, { nativeJson: true });
    case "openai-compatible":
      return callOpenAi(request, endpoint ?? { apiKey: null, baseUrl: null }, { nativeJson: false });
    case "anthropic":
      return callAnthropic(request, endpoint ?? { apiKey: null, baseUrl: null });
    case "workers-ai":
      return callWorkersAi(request, (env as { AI?: AiBinding }).AI);
  }
}
