-- v2: jobs are plans of stages. Results are keyed by (job, stage, index); v1 results are the stage
-- `items`. A job row gains its stages, final output, failure context, budget and pause reason.
-- A recovered job ends again, so its webhook deliveries are numbered by `round`.
PRAGMA defer_foreign_keys = true;

CREATE TABLE results_v2 (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  stage TEXT NOT NULL DEFAULT 'items', -- v1 operators' one stage
  idx INTEGER NOT NULL,
  completion_seq INTEGER NOT NULL,
  success INTEGER NOT NULL,
  data TEXT NOT NULL, -- the task result as JSON
  PRIMARY KEY (job_id, stage, idx)
);
INSERT INTO results_v2 (job_id, stage, idx, completion_seq, success, data)
  SELECT job_id, 'items', idx, completion_seq, success, data FROM results;
DROP TABLE results;
ALTER TABLE results_v2 RENAME TO results;
CREATE INDEX results_by_completion ON results (job_id, stage, completion_seq);

ALTER TABLE jobs ADD COLUMN main_stage TEXT NOT NULL DEFAULT 'items';
ALTER TABLE jobs ADD COLUMN stage TEXT; -- the stage running now
ALTER TABLE jobs ADD COLUMN stages TEXT NOT NULL DEFAULT '[]'; -- JSON: [{name, status, total, completed, succeeded, failed, usage}]
ALTER TABLE jobs ADD COLUMN output TEXT; -- JSON: the final value of staged jobs
ALTER TABLE jobs ADD COLUMN error TEXT; -- JSON: {code, message, stage, index, step}
ALTER TABLE jobs ADD COLUMN budget TEXT; -- JSON: {total, spent, reserved, by_stage}
ALTER TABLE jobs ADD COLUMN pause_reason TEXT;

-- Rebuilt with its child table, so no row ever points at a dropped table: new parent and child,
-- copies, drop the old child then the old parent, then rename (a rename rewrites the child's
-- REFERENCES clause to the parent's new name).
CREATE TABLE webhook_deliveries_v2 (
  id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL REFERENCES jobs(id),
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  event_type TEXT NOT NULL,
  round INTEGER NOT NULL DEFAULT 1, -- 1, then one more per recover of the job
  url TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempt_count INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_until INTEGER,
  created_at TEXT NOT NULL,
  scheduled_attempts INTEGER NOT NULL DEFAULT 0,
  UNIQUE (job_id, event_type, round)
);
INSERT INTO webhook_deliveries_v2 (id, job_id, tenant_id, event_type, round, url, payload, status, attempt_count,
    next_attempt_at, lease_until, created_at, scheduled_attempts)
  SELECT id, job_id, tenant_id, event_type, 1, url, payload, status, attempt_count, next_attempt_at, lease_until,
    created_at, scheduled_attempts FROM webhook_deliveries;

CREATE TABLE webhook_attempts_v2 (
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries_v2(id),
  attempt INTEGER NOT NULL,
  attempted_at TEXT NOT NULL,
  status_code INTEGER,
  duration_ms INTEGER NOT NULL,
  error TEXT,
  response_excerpt TEXT, -- at most 1 KB of the response body
  next_attempt_at TEXT,
  PRIMARY KEY (delivery_id, attempt)
);
INSERT INTO webhook_attempts_v2 SELECT delivery_id, attempt, attempted_at, status_code, duration_ms, error, response_excerpt, next_attempt_at
  FROM webhook_attempts;

DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_v2 RENAME TO webhook_deliveries;
ALTER TABLE webhook_attempts_v2 RENAME TO webhook_attempts;
CREATE INDEX webhook_deliveries_by_job ON webhook_deliveries (job_id);
