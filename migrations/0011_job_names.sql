-- Contract v4, "Estimates and names": a job's optional name (at most 200 characters), shown
-- with it in the job view, the job list and the dashboard.
ALTER TABLE jobs ADD COLUMN name TEXT;
