-- Traces (contract v4, "Traces (OpenTelemetry)"): a tenant's OTLP collector. `headers_enc`: its
-- headers' JSON sealed as a provider key is (they carry API keys); the last export's outcome for
-- GET /v1/telemetry.
CREATE TABLE telemetry (
  tenant_id TEXT PRIMARY KEY,
  otlp_endpoint TEXT NOT NULL,
  header_names TEXT NOT NULL,
  headers_enc TEXT,
  capture_content INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  last_export_at TEXT,
  last_status INTEGER,
  last_error TEXT,
  last_spans INTEGER
);
