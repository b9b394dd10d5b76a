-- 0002_resilience: circuit breakers, dead letters, concurrency slots and
-- the alert outbox. The same tables as store/sqlite/migrations/
-- 0002_resilience.sql; conventions as in 0001_init.sql.

CREATE TABLE breakers (
    name           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    state          TEXT    NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
    failures       INTEGER NOT NULL DEFAULT 0,
    opened_at      BIGINT,
    open_until     BIGINT,
    trial_run_id   TEXT COLLATE "C",
    trial_step_key TEXT COLLATE "C",
    trial_until    BIGINT,
    updated_at     BIGINT  NOT NULL
);

CREATE TABLE dead_letters (
    id         BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    step       TEXT COLLATE "C" NOT NULL,
    step_key   TEXT COLLATE "C" NOT NULL,
    idx        INTEGER NOT NULL,
    item       TEXT,
    error      TEXT,
    status     TEXT    NOT NULL CHECK (status IN ('open', 'retried', 'dropped')),
    output     TEXT,
    created_at BIGINT  NOT NULL,
    closed_at  BIGINT
);
CREATE INDEX dead_letters_open ON dead_letters (id) WHERE status = 'open';
CREATE INDEX dead_letters_run ON dead_letters (run_id, id);

-- (SQLite: held is INTEGER 0/1.)
CREATE TABLE concurrency_slots (
    workflow       TEXT COLLATE "C" NOT NULL,
    key            TEXT COLLATE "C" NOT NULL,
    run_id         TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    run_created_at BIGINT  NOT NULL,
    held           BOOLEAN NOT NULL DEFAULT false,
    updated_at     BIGINT  NOT NULL,
    PRIMARY KEY (workflow, key, run_id)
);
CREATE INDEX concurrency_slots_run ON concurrency_slots (run_id);

CREATE TABLE alert_outbox (
    id          BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    root_run_id TEXT COLLATE "C" NOT NULL,
    alert       TEXT COLLATE "C" NOT NULL,
    event       TEXT COLLATE "C" NOT NULL,
    step_key    TEXT COLLATE "C",
    message     TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT,
    owner       TEXT COLLATE "C",
    lease_until BIGINT,
    created_at  BIGINT  NOT NULL,
    next_at     BIGINT  NOT NULL,
    sent_at     BIGINT
);
CREATE INDEX alert_outbox_due ON alert_outbox (next_at, id) WHERE status = 'pending';
CREATE INDEX alert_outbox_run ON alert_outbox (run_id, id);
