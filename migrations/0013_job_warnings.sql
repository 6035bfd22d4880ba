-- Contract v4, "Providers as they fail" (model lifecycle): a job whose model shuts down within 30
-- days, or before its deadline, carries `warnings` (JSON: [{"code", "model", "shutdown_date",
-- "replacement"}]) in its 202 answer and its view. Null: none.
ALTER TABLE jobs ADD COLUMN warnings TEXT;
