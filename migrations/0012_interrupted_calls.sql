-- Bounded in aggregate (#48): calls sent again because their first hand never reported (the
-- runtime restarted mid-call). The provider may have billed the first: they are counted apart,
-- with the input tokens of the prompt they sent (the re-sent call's own count of it).
ALTER TABLE jobs ADD COLUMN interrupted_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN interrupted_input_tokens INTEGER NOT NULL DEFAULT 0;
