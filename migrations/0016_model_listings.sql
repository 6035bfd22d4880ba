-- A provider's own word on when its models shut down (contract v4, "Providers as they fail"):
-- OpenAI's GET /v1/models `shutdown_date`, read at most daily per credential (src/llm/model-listing.ts).
-- `credential_id` is the digest of the provider, key and base URL (never the key); `shutdowns` is
-- JSON {"<model name>": "YYYY-MM-DD"} of the listed models with a date; `ok` 0: the last read failed
-- (tried again after an hour, the last good listing kept).
CREATE TABLE model_listings (
  credential_id TEXT PRIMARY KEY,
  read_at INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  shutdowns TEXT NOT NULL
);
