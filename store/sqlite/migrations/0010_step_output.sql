-- 0010_step_output: the live output of exec steps (store/output.go), in
-- chunks of redacted bytes written while the program runs. seq is the
-- cursor readers page a run's output with (step_output_run); the unique
-- key makes a retried write store a chunk once, and starts with run_id
-- for prune.
CREATE TABLE step_output (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id   TEXT    NOT NULL REFERENCES runs (id),
    step_key TEXT    NOT NULL,
    attempt  INTEGER NOT NULL,
    stream   TEXT    NOT NULL,
    chunk    INTEGER NOT NULL,
    at       INTEGER NOT NULL,
    data     BLOB    NOT NULL,
    UNIQUE (run_id, step_key, attempt, stream, chunk)
);
CREATE INDEX step_output_run ON step_output (run_id, seq);
