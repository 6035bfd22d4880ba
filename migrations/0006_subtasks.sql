-- Agent subtasks: a child sub-session names its parent; GET /v1/sessions/{id} lists the children.
ALTER TABLE sessions ADD COLUMN parent_id TEXT;
ALTER TABLE sessions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_parent ON sessions (parent_id);
