-- 0005_run_inputs: a run's inputs move to a table of their own. SQLite
-- rewrites a whole row on every UPDATE, and every transition of a run
-- updates its row (the fence: updated_at, attempts_used, status, ...), so
-- inputs kept in the runs row (a foreach's item list, a large document)
-- were copied, overflow pages and all, into the log on every step of the
-- run. They are written once, with the run, and read by run reads only.
-- runs.inputs stays (SQLite cannot drop it cheaply) and is NULL from here.
CREATE TABLE run_inputs (
    run_id TEXT NOT NULL PRIMARY KEY REFERENCES runs (id),
    inputs TEXT NOT NULL
);
INSERT INTO run_inputs (run_id, inputs) SELECT id, inputs FROM runs WHERE inputs IS NOT NULL;
UPDATE runs SET inputs = NULL WHERE inputs IS NOT NULL;
