/**
 * Per-tenant provider credentials in D1; the API key is sealed with AES-GCM under ENCRYPTION_KEY.
 * A credential may be a pool of deployments (contract v4): each with its own base URL, sealed key,
 * weight and declared limits; the row's own fields are the first deployment's, so whatever reads
 * one endpoint (a provider batch, the model listing) uses that one.
 */
import { seal, unseal } from "../lib/crypto";
import type { KeyedProvider } from "../llm/models";
import { rateLimitOf, type RateLimit } from "../engine/pacing";

/** A deployment of a pool as the API shows it (no secret). */
export interface DeploymentView {
  base_url: string | null;
  key_last4: string;
  weight: number;
  rate_limits: Record<string, RateLimit> | null;
  /** Its circuit as the tenant's jobs last saw it change (the model whose calls changed it). */
  circuit?: "closed" | "open" | "half_open";
  circuit_model?: string | null;
  circuit_changed_at?: string | null;
}

export interface ProviderCredentialView {
  provider: string;
  base_url: string | null;
  key_last4: string;
  rate_limits: Record<string, RateLimit> | null;
  /** A pool's deployments (absent: one endpoint). */
  deployments?: DeploymentView[];
}

/** One deployment of a pool, its key unsealed. */
export interface Deployment {
  apiKey: string;
  baseUrl: string | null;
  weight: number;
  rateLimits: Record<string, RateLimit> | null;
}

export interface ProviderCredential {
  apiKey: string;
  baseUrl: string | null;
  /** The tenant's declared rate limits per model name (or `*`): src/engine/pacing.ts. */
  rateLimits?: Record<string, RateLimit> | null;
  /** A pool's deployments, the first one's fields also the credential's own (absent: one endpoint). */
  deployments?: Deployment[];
}

/** A deployment as the PUT gives it. */
export interface DeploymentInput {
  base_url: string | null;
  api_key: string;
  weight: number;
  rate_limits: Record<string, { rpm?: number | null; tpm?: number | null }> | null;
}

/** A deployment as the `deployments` column keeps it: its key sealed. */
interface StoredDeployment extends DeploymentView {
  api_key_enc: string;
}

/** The `rate_limits` column: JSON of model name (or `*`) to limits, or null. */
const storedLimits = (text: string | null): Record<string, RateLimit> | null => (text ? (JSON.parse(text) as Record<string, RateLimit>) : null);

const limitsOf = (raw: Record<string, { rpm?: number | null; tpm?: number | null }> | null): Record<string, RateLimit> | null =>
  raw ? Object.fromEntries(Object.entries(raw).map(([m, l]) => [m, rateLimitOf(l)])) : null;

/** Stores one endpoint (`deployments` null) or a pool, whose first deployment is the credential's own endpoint. */
export async function putCredential(
  db: D1Database,
  encryptionKey: string,
  tenantId: string,
  provider: KeyedProvider,
  apiKey: string,
  baseUrl: string | null,
  rateLimits: Record<string, { rpm?: number | null; tpm?: number | null }> | null,
  deployments: DeploymentInput[] | null = null,
): Promise<ProviderCredentialView> {
  // The row's own endpoint is the first deployment's (sealed once), or the one endpoint given.
  const stored: StoredDeployment[] = await Promise.all(
    (deployments ?? [{ api_key: apiKey, base_url: baseUrl, weight: 1, rate_limits: rateLimits }]).map(async (d) => ({
      base_url: d.base_url,
      api_key_enc: await seal(d.api_key, encryptionKey),
      key_last4: d.api_key.slice(-4),
      weight: d.weight,
      rate_limits: limitsOf(d.rate_limits),
    })),
  );
  const own = stored[0] as StoredDeployment;
  const view: ProviderCredentialView = { provider, base_url: own.base_url, key_last4: own.key_last4, rate_limits: own.rate_limits };
  if (deployments) view.deployments = stored.map(deploymentView);
  await db.batch([
    db
      .prepare(
        `INSERT INTO provider_credentials (tenant_id, provider, api_key_enc, base_url, key_last4, rate_limits, deployments, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, provider) DO UPDATE SET
         api_key_enc = excluded.api_key_enc, base_url = excluded.base_url, key_last4 = excluded.key_last4,
         rate_limits = excluded.rate_limits, deployments = excluded.deployments, updated_at = excluded.updated_at`,
      )
      .bind(
        tenantId,
        provider,
        own.api_key_enc,
        own.base_url,
        own.key_last4,
        own.rate_limits ? JSON.stringify(own.rate_limits) : null,
        deployments ? JSON.stringify(stored) : null,
        new Date().toISOString(),
      ),
    db.prepare("DELETE FROM deployment_circuits WHERE tenant_id = ? AND provider = ?").bind(tenantId, provider), // its deployments may be others now
  ]);
  return view;
}

/** How long an opened circuit keeps a deployment out (the jobs' cool-down: durable-objects/coordinator/circuits.ts). */
export const CIRCUIT_COOL_DOWN_MS = 30_000;

/** A deployment's circuit as the jobs last saw it: open within its cool-down, half open after it (its next call probes), else closed. */
function circuitView(row: CircuitRow | undefined): Pick<DeploymentView, "circuit" | "circuit_model" | "circuit_changed_at"> {
  if (!row) return { circuit: "closed", circuit_model: null, circuit_changed_at: null };
  const circuit = row.circuit === "closed" ? "closed" : Date.now() < row.changed_at + CIRCUIT_COOL_DOWN_MS ? "open" : "half_open";
  return { circuit, circuit_model: row.model, circuit_changed_at: new Date(row.changed_at).toISOString() };
}

const deploymentView = ({ base_url, key_last4, weight, rate_limits }: StoredDeployment): DeploymentView => ({ base_url, key_last4, weight, rate_limits });

const storedDeployments = (text: string | null): StoredDeployment[] | null => (text ? (JSON.parse(text) as StoredDeployment[]) : null);

export async function listCredentials(db: D1Database, tenantId: string): Promise<ProviderCredentialView[]> {
  const { results } = await db
    .prepare("SELECT provider, base_url, key_last4, rate_limits, deployments FROM provider_credentials WHERE tenant_id = ? ORDER BY provider")
    .bind(tenantId)
    .all<Omit<ProviderCredentialView, "rate_limits" | "deployments"> & { rate_limits: string | null; deployments: string | null }>();
  const circuits = results.some((r) => r.deployments) ? await circuitRows(db, tenantId) : [];
  return results.map(({ deployments, ...r }) => {
    const pool = storedDeployments(deployments);
    const views = pool?.map((d, i) => ({ ...deploymentView(d), ...circuitView(circuits.find((c) => c.provider === r.provider && c.deployment === i)) }));
    return { ...r, rate_limits: storedLimits(r.rate_limits), ...(views ? { deployments: views } : {}) };
  });
}

export async function deleteCredential(db: D1Database, tenantId: string, provider: string): Promise<boolean> {
  const [result] = await db.batch([
    db.prepare("DELETE FROM provider_credentials WHERE tenant_id = ? AND provider = ?").bind(tenantId, provider),
    db.prepare("DELETE FROM deployment_circuits WHERE tenant_id = ? AND provider = ?").bind(tenantId, provider),
  ]);
  return (result?.meta.changes ?? 0) > 0;
}

/** A pool deployment's circuit as a job saw it change (for GET /v1/providers): the latest change wins. */
export async function recordCircuit(
  db: D1Database,
  tenantId: string,
  provider: string,
  deployment: number,
  model: string,
  circuit: "open" | "closed",
  at: number,
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO deployment_circuits (tenant_id, provider, deployment, model, circuit, changed_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, provider, deployment) DO UPDATE SET model = excluded.model, circuit = excluded.circuit, changed_at = excluded.changed_at
       WHERE excluded.changed_at >= deployment_circuits.changed_at`,
    )
    .bind(tenantId, provider, deployment, model, circuit, at)
    .run();
}

export interface CircuitRow {
  provider: string;
  deployment: number;
  model: string;
  circuit: "open" | "closed";
  changed_at: number;
}

async function circuitRows(db: D1Database, tenantId: string): Promise<CircuitRow[]> {
  const { results } = await db
    .prepare("SELECT provider, deployment, model, circuit, changed_at FROM deployment_circuits WHERE tenant_id = ?")
    .bind(tenantId)
    .all<CircuitRow>();
  return results;
}

export async function getCredential(db: D1Database, encryptionKey: string, tenantId: string, provider: string): Promise<ProviderCredential | null> {
  const row = await db
    .prepare("SELECT api_key_enc, base_url, rate_limits, deployments FROM provider_credentials WHERE tenant_id = ? AND provider = ?")
    .bind(tenantId, provider)
    .first<{ api_key_enc: string; base_url: string | null; rate_limits: string | null; deployments: string | null }>();
  if (!row) return null;
  const credential: ProviderCredential = {
    apiKey: await unseal(row.api_key_enc, encryptionKey),
    baseUrl: row.base_url,
    rateLimits: storedLimits(row.rate_limits),
  };
  const pool = storedDeployments(row.deployments);
  if (pool) {
    credential.deployments = await Promise.all(
      pool.map(async (d) => ({ apiKey: await unseal(d.api_key_enc, encryptionKey), baseUrl: d.base_url, weight: d.weight, rateLimits: d.rate_limits })),
    );
  }
  return credential;
}
