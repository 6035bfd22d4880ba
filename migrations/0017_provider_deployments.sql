-- Deployment pools (contract v4, "Providers as they fail"): a provider credential may be a pool of
-- deployments (Azure regions, gateways, self-hosted replicas), JSON
-- [{"base_url", "api_key_enc", "key_last4", "weight", "rate_limits"}], each key sealed as api_key_enc
-- is. The row's own api_key_enc, base_url, key_last4 and rate_limits are the first deployment's.
ALTER TABLE provider_credentials ADD COLUMN deployments TEXT;

-- Each deployment's circuit as the jobs last saw it change (opened by outages in a row, closed by an
-- answer): GET /v1/providers shows it. One row per (tenant, provider, deployment), written only
-- when a job's circuit for it changes.
CREATE TABLE deployment_circuits (
  tenant_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  deployment INTEGER NOT NULL,
  model TEXT NOT NULL,
  circuit TEXT NOT NULL,
  changed_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, provider, deployment)
);
