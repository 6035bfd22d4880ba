-- Scheduled attempts are counted apart from manual redeliveries, so a redeliver does not move
-- a delivery along its retry schedule.
ALTER TABLE webhook_deliveries ADD COLUMN scheduled_attempts INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_deliveries SET scheduled_attempts = attempt_count;
