-- 0008_schedules: the schedules of workflow versions and the record of
-- their slots. Conventions as in 0001_init.sql; booleans are 0/1.

-- One row per schedule name of a workflow: the definition of the version
-- that last activated it. A later version that drops the name sets
-- active = 0; the row and its fires stay.
CREATE TABLE schedules (
    workflow      TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    version       TEXT    NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('cron', 'every')),
    spec          TEXT    NOT NULL,
    timezone      TEXT    NOT NULL,
    overlap       TEXT    NOT NULL,
    catch_up      TEXT    NOT NULL,
    max_catch_up  INTEGER NOT NULL DEFAULT 0,
    jitter        INTEGER NOT NULL DEFAULT 0, -- microseconds
    inputs        TEXT,
    work_dir      TEXT,
    paused        INTEGER NOT NULL DEFAULT 0,
    active        INTEGER NOT NULL DEFAULT 1,
    since         INTEGER NOT NULL,
    next_at       INTEGER,
    last_slot     INTEGER,
    last_run_id   TEXT,
    last_fired_at INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (workflow, name),
    FOREIGN KEY (workflow, version) REFERENCES workflow_versions (workflow, version)
);
-- The due query: active, unpaused schedules in next_at order.
CREATE INDEX schedules_due ON schedules (next_at, workflow, name) WHERE active = 1 AND paused = 0;

-- One row per slot dealt with: fired (a run was started in the same
-- transaction) or skipped. The primary key is the exactly-once guarantee:
-- a second fire of a slot fails on it and its transaction, run and all,
-- rolls back. run_id has no foreign key: pruning a run keeps the record
-- that its slot was fired.
CREATE TABLE schedule_fires (
    workflow TEXT    NOT NULL,
    schedule TEXT    NOT NULL,
    slot     INTEGER NOT NULL,
    status   TEXT    NOT NULL CHECK (status IN ('fired', 'skipped')),
    reason   TEXT,
    run_id   TEXT,
    fired_at INTEGER NOT NULL,
    jitter   INTEGER NOT NULL DEFAULT 0, -- microseconds
    PRIMARY KEY (workflow, schedule, slot),
    FOREIGN KEY (workflow, schedule) REFERENCES schedules (workflow, name)
);
CREATE INDEX schedule_fires_run ON schedule_fires (run_id) WHERE run_id IS NOT NULL;
