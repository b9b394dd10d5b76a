-- 0007_step_output: as store/sqlite/migrations/0010_step_output.sql,
-- which explains it. seq is in commit order because chunks are inserted
-- under the events lock (store/postgres/tx.go).
CREATE TABLE step_output (
    seq      BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id   TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    step_key TEXT COLLATE "C" NOT NULL,
    attempt  INTEGER NOT NULL,
    stream   TEXT COLLATE "C" NOT NULL,
    chunk    INTEGER NOT NULL,
    at       BIGINT  NOT NULL,
    data     BYTEA   NOT NULL,
    UNIQUE (run_id, step_key, attempt, stream, chunk)
);
CREATE INDEX step_output_run ON step_output (run_id, seq);
