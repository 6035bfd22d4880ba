-- Contract v4, "Providers as they fail" (fallback chains): a job with `fallbacks` shows each model
-- of its chain with its circuit and how many items it answered (JSON: [{"model", "circuit",
-- "answered"}]). Null: a job without fallbacks, or one from before.
ALTER TABLE jobs ADD COLUMN models TEXT;
