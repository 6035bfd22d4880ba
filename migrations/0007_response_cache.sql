-- The response cache (opt-in per job: "cache": {"ttl_secs": N}): a tenant's validated model
-- answers keyed by a SHA-256 of the call (provider, endpoint, model, system prompt, rendered
-- prompt, output schema, sampling parameters). A reader's ttl_secs decides what is fresh; rows
-- older than the largest TTL are deleted by the hourly cron. Jobs count cached calls apart.
CREATE TABLE response_cache (
  tenant_id TEXT NOT NULL,
  key TEXT NOT NULL,
  text TEXT NOT NULL, -- the model's answer as it came, validated again on every reuse
  input_tokens INTEGER NOT NULL, -- what the original call cost: what a reuse saves
  output_tokens INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX response_cache_by_age ON response_cache (created_ms);

ALTER TABLE jobs ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cached_output_tokens INTEGER NOT NULL DEFAULT 0;
