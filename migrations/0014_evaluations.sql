-- Contract v4, "Evaluations": an evaluation is a job of type `evaluation` over another job of the
-- same tenant (`evaluates`); the evaluated job's view lists its evaluations (the index finds them).
ALTER TABLE jobs ADD COLUMN evaluates TEXT;
CREATE INDEX jobs_evaluates ON jobs (tenant_id, evaluates) WHERE evaluates IS NOT NULL;
