-- v3 pacing: a tenant's declared rate limits on its own provider credential (JSON: model name or
-- "*" -> {"rpm", "tpm"}), and the pacing a job runs at, as GET /v1/jobs/{id} shows it.
ALTER TABLE provider_credentials ADD COLUMN rate_limits TEXT;
ALTER TABLE jobs ADD COLUMN pacing TEXT;
