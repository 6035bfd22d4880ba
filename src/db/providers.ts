/** Per-tenant provider credentials in D1; the API key is sealed with AES-GCM under ENCRYPTION_KEY. */
import { seal, unseal } from "../lib/crypto";
import type { KeyedProvider } from "../llm/models";
import { rateLimitOf, type RateLimit } from "../engine/pacing";

export interface ProviderCredentialView {
  provider: string;
  base_url: string | null;
  key_last4: string;
  rate_limits: Record<string, RateLimit> | null;
}

export interface ProviderCredential {
  apiKey: string;
  baseUrl: string | null;
  /** The tenant's declared rate limits per model name (or `*`): src/engine/pacing.ts. */
  rateLimits?: Record<string, RateLimit> | null;
}

/** The `rate_limits` column: JSON of model name (or `*`) to limits, or null. */
const storedLimits = (text: string | null): Record<string, RateLimit> | null => (text ? (JSON.parse(text) as Record<string, RateLimit>) : null);

export async function putCredential(
  db: D1Database,
  encryptionKey: string,
  tenantId: string,
  provider: KeyedProvider,
  apiKey: string,
  baseUrl: string | null,
  rateLimits: Record<string, { rpm?: number | null; tpm?: number | null }> | null,
): Promise<ProviderCredentialView> {
  const limits = rateLimits ? Object.fromEntries(Object.entries(rateLimits).map(([m, l]) => [m, rateLimitOf(l)])) : null;
  const view = { provider, base_url: baseUrl, key_last4: apiKey.slice(-4), rate_limits: limits };
  await db
    .prepare(
      `INSERT INTO provider_credentials (tenant_id, provider, api_key_enc, base_url, key_last4, rate_limits, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, provider) DO UPDATE SET
         api_key_enc = excluded.api_key_enc, base_url = excluded.base_url,
         key_last4 = excluded.key_last4, rate_limits = excluded.rate_limits, updated_at = excluded.updated_at`,
    )
    .bind(tenantId, provider, await seal(apiKey, encryptionKey), baseUrl, view.key_last4, limits ? JSON.stringify(limits) : null, new Date().toISOString())
    .run();
  return view;
}

export async function listCredentials(db: D1Database, tenantId: string): Promise<ProviderCredentialView[]> {
  const { results } = await db
    .prepare("SELECT provider, base_url, key_last4, rate_limits FROM provider_credentials WHERE tenant_id = ? ORDER BY provider")
    .bind(tenantId)
    .all<Omit<ProviderCredentialView, "rate_limits"> & { rate_limits: string | null }>();
  return results.map((r) => ({ ...r, rate_limits: storedLimits(r.rate_limits) }));
}

export async function deleteCredential(db: D1Database, tenantId: string, provider: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM provider_credentials WHERE tenant_id = ? AND provider = ?").bind(tenantId, provider).run();
  return result.meta.changes > 0;
}

export async function getCredential(db: D1Database, encryptionKey: string, tenantId: string, provider: string): Promise<ProviderCredential | null> {
  const row = await db
    .prepare("SELECT api_key_enc, base_url, rate_limits FROM provider_credentials WHERE tenant_id = ? AND provider = ?")
    .bind(tenantId, provider)
    .first<{ api_key_enc: string; base_url: string | null; rate_limits: string | null }>();
  if (!row) return null;
  return { apiKey: await unseal(row.api_key_enc, encryptionKey), baseUrl: row.base_url, rateLimits: storedLimits(row.rate_limits) };
}
