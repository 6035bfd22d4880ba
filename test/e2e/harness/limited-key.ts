/**
 * Tenants whose provider credential is a key of their own. The provider limiter's adaptive limit
 * and the rate pacer are per credential and model: a test that scripts throttles (429, 529) on
 * the deployment's key would cut every other test's jobs on it, so such tests use `ownKeyTenant`.
 * `limitedTenant`'s key is also held by the fake model server to rate limits (`POST /_fake/limits`).
 */
import { expect } from "vitest";
import type { LimitConfig } from "../../fake-model/limits.ts";
import { call, newTenant, type Tenant } from "./api.ts";
import { base, fakeUrl, uniqueTag } from "./context.ts";

type Provider = "openai" | "anthropic" | "openai-compatible";

async function useKey(url: string, tenant: Tenant, provider: Provider, apiKey: string, extra: Record<string, unknown> = {}): Promise<void> {
  const baseUrl = provider === "anthropic" ? fakeUrl() : `${fakeUrl()}/v1`;
  const put = await call(url, "PUT", `/v1/providers/${provider}`, { token: tenant.key, body: { api_key: apiKey, base_url: baseUrl, ...extra } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

export interface OwnKeyTenant extends Tenant {
  providerKeys: Record<Provider, string>;
}

/**
 * A tenant with a key of its own for each provider (`url`: the server, by default the suite's;
 * `providerKeys`: another tenant's, to share them). The fake serves `openai-compatible` as an
 * OpenAI-like server without rate-limit headers: a fresh key there is not probed (./pacing.ts).
 */
export async function ownKeyTenant(url = base(), providerKeys?: Record<Provider, string>): Promise<OwnKeyTenant> {
  const tenant = await newTenant(url);
  const keys = providerKeys ?? {
    openai: `sk-${uniqueTag("own-openai")}`,
    anthropic: `sk-ant-${uniqueTag("own")}`,
    "openai-compatible": `sk-${uniqueTag("own-compatible")}`,
  };
  for (const provider of ["openai", "anthropic", "openai-compatible"] as const) await useKey(url, tenant, provider, keys[provider]);
  return { ...tenant, providerKeys: keys };
}

/** `extra`: more of the PUT's body (`rate_limits`, say); `models`: limits of their own for some models (the fake's model names, e.g. `gpt-6-luna`). */
export async function limitedTenant(
  limits: LimitConfig,
  provider: Provider = "openai",
  extra: Record<string, unknown> = {},
  models: Record<string, LimitConfig> = {},
): Promise<Tenant> {
  const tenant = await newTenant(base());
  const apiKey = `sk-${uniqueTag("limited")}`;
  await fetch(`${fakeUrl()}/_fake/limits`, { method: "POST", body: JSON.stringify({ key: apiKey, limits }) });
  for (const [model, own] of Object.entries(models))
    await fetch(`${fakeUrl()}/_fake/limits`, { method: "POST", body: JSON.stringify({ key: apiKey, limits: own, model }) });
  await useKey(base(), tenant, provider, apiKey, extra);
  return tenant;
}
