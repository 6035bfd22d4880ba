-- Adaptive concurrency: the calls a job may have in flight now (its concurrency, or less while the
-- provider throttles the tenant's calls to the model). NULL until the job starts.
ALTER TABLE jobs ADD COLUMN effective_concurrency INTEGER;
