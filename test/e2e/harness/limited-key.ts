/** A tenant whose provider credential is a key of its own that the fake model server holds to rate limits (`POST /_fake/limits`). */
import { expect } from "vitest";
import type { LimitConfig } from "../../fake-model/limits.ts";
import { call, newTenant, type Tenant } from "./api.ts";
import { base, fakeUrl, uniqueTag } from "./context.ts";

/** `extra`: more of the PUT's body (`rate_limits`, say); `models`: limits of their own for some models (the fake's model names, e.g. `gpt-4o-mini`). */
export async function limitedTenant(limits: LimitConfig, provider: "openai" | "anthropic" = "openai", extra: Record<string, unknown> = {}, models: Record<string, LimitConfig> = {}): Promise<Tenant> {
  const tenant = await newTenant(base());
  const apiKey = `sk-${uniqueTag("limited")}`;
  await fetch(`${fakeUrl()}/_fake/limits`, { method: "POST", body: JSON.stringify({ key: apiKey, limits }) });
  for (const [model, own] of Object.entries(models)) await fetch(`${fakeUrl()}/_fake/limits`, { method: "POST", body: JSON.stringify({ key: apiKey, limits: own, model }) });
  const baseUrl = provider === "openai" ? `${fakeUrl()}/v1` : fakeUrl();
  const put = await call(base(), "PUT", `/v1/providers/${provider}`, { token: tenant.key, body: { api_key: apiKey, base_url: baseUrl, ...extra } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return tenant;
}
