-- Tenants, their API keys (hashes only) and their provider credentials (encrypted).
CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE, -- hex SHA-256 of the whole key
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);

CREATE TABLE provider_credentials (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  provider TEXT NOT NULL,
  api_key_enc TEXT NOT NULL, -- AES-GCM under ENCRYPTION_KEY: base64(iv || ciphertext)
  base_url TEXT,
  key_last4 TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, provider)
);

-- Jobs: one row per operator run. Counters are refreshed by the job's coordinator.
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  model TEXT NOT NULL,
  total INTEGER NOT NULL,
  completed INTEGER NOT NULL DEFAULT 0,
  succeeded INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  total_attempts INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  metadata TEXT NOT NULL DEFAULT '{}',
  idempotency_key TEXT,
  request_hash TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX jobs_by_tenant ON jobs (tenant_id, created_ms DESC, id DESC);
CREATE UNIQUE INDEX jobs_idempotency ON jobs (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- One row per finished item; the primary key makes "exactly one result per index" a constraint.
CREATE TABLE results (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  idx INTEGER NOT NULL,
  completion_seq INTEGER NOT NULL,
  success INTEGER NOT NULL,
  data TEXT NOT NULL, -- the item result as JSON
  PRIMARY KEY (job_id, idx)
);
CREATE INDEX results_by_completion ON results (job_id, completion_seq);
