-- Agentic sub-sessions (one per item of an agentic_map job) and every message of each.
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL REFERENCES jobs(id),
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  idx INTEGER NOT NULL,
  status TEXT NOT NULL, -- running | completed | failed
  stop_reason TEXT,
  turns INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  compactions INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX sessions_by_job ON sessions (job_id, idx);

CREATE TABLE session_messages (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  seq INTEGER NOT NULL,
  message TEXT NOT NULL, -- the message as JSON: {role, content, tool_calls?, tool_call_id?, name?, is_error?}
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
);
