-- Contract v3, "Prompt caching" and "Cost in dollars": a job's prompt-cache tokens (parts of
-- input_tokens), its dollars, and its calls on models with no price (then its cost is null).
ALTER TABLE jobs ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;
-- Contract v3, "Execution modes": the job's execution and its provider batches (JSON, as
-- GET /v1/jobs/{id} shows them; the coordinator's storage is the truth).
ALTER TABLE jobs ADD COLUMN execution TEXT;
ALTER TABLE jobs ADD COLUMN batches TEXT;
-- Execution mode auto: calls billed for an item that had (or was getting) its result another way.
ALTER TABLE jobs ADD COLUMN duplicated_input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN duplicated_output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN duplicated_cost_usd REAL NOT NULL DEFAULT 0;
