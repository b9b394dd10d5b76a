-- 0005_schedules: the schedules of workflow versions and the record of
-- their slots. The same tables as store/sqlite/migrations/0008_schedules.sql
-- (which explains them); conventions as in 0001_init.sql.
CREATE TABLE schedules (
    workflow      TEXT COLLATE "C" NOT NULL,
    name          TEXT COLLATE "C" NOT NULL,
    version       TEXT COLLATE "C" NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('cron', 'every')),
    spec          TEXT    NOT NULL,
    timezone      TEXT    NOT NULL,
    overlap       TEXT    NOT NULL,
    catch_up      TEXT    NOT NULL,
    max_catch_up  INTEGER NOT NULL DEFAULT 0,
    jitter        BIGINT  NOT NULL DEFAULT 0,
    inputs        TEXT,
    work_dir      TEXT,
    paused        BOOLEAN NOT NULL DEFAULT false,
    active        BOOLEAN NOT NULL DEFAULT true,
    since         BIGINT  NOT NULL,
    next_at       BIGINT,
    last_slot     BIGINT,
    last_run_id   TEXT COLLATE "C",
    last_fired_at BIGINT,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL,
    PRIMARY KEY (workflow, name),
    FOREIGN KEY (workflow, version) REFERENCES workflow_versions (workflow, version)
);
CREATE INDEX schedules_due ON schedules (next_at, workflow, name) WHERE active AND NOT paused;

CREATE TABLE schedule_fires (
    workflow TEXT COLLATE "C" NOT NULL,
    schedule TEXT COLLATE "C" NOT NULL,
    slot     BIGINT  NOT NULL,
    status   TEXT    NOT NULL CHECK (status IN ('fired', 'skipped')),
    reason   TEXT,
    run_id   TEXT COLLATE "C",
    fired_at BIGINT  NOT NULL,
    jitter   BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (workflow, schedule, slot),
    FOREIGN KEY (workflow, schedule) REFERENCES schedules (workflow, name)
);
CREATE INDEX schedule_fires_run ON schedule_fires (run_id) WHERE run_id IS NOT NULL;
