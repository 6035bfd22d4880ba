-- Webhooks: the tenant's default signing secret, a job's own webhook, and every delivery attempt.
ALTER TABLE tenants ADD COLUMN webhook_secret_enc TEXT; -- AES-GCM sealed "whsec_…"
ALTER TABLE jobs ADD COLUMN webhook_url TEXT;
ALTER TABLE jobs ADD COLUMN webhook_secret_enc TEXT; -- the job's own secret, if it gave one

-- One delivery per (job, event); `id` doubles as the Standard Webhooks `webhook-id`.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL REFERENCES jobs(id),
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  event_type TEXT NOT NULL,
  url TEXT NOT NULL,
  payload TEXT NOT NULL, -- the exact body that is signed and sent
  status TEXT NOT NULL, -- pending | delivered | failed | disabled
  attempt_count INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER, -- ms epoch; null once final
  lease_until INTEGER, -- ms epoch: an attempt is under way until then
  created_at TEXT NOT NULL,
  UNIQUE (job_id, event_type)
);
CREATE INDEX webhook_deliveries_by_job ON webhook_deliveries (job_id);

CREATE TABLE webhook_attempts (
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
  attempt INTEGER NOT NULL,
  attempted_at TEXT NOT NULL,
  status_code INTEGER,
  duration_ms INTEGER NOT NULL,
  error TEXT,
  response_excerpt TEXT, -- at most 1 KB of the response body
  next_attempt_at TEXT,
  PRIMARY KEY (delivery_id, attempt)
);
