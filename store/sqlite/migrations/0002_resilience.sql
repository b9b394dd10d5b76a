-- 0002_resilience: circuit breakers, dead letters, concurrency slots and
-- the alert outbox. Conventions as in 0001_init.sql.

-- One row per breaker name, shared by every workflow, run and process.
CREATE TABLE breakers (
    name           TEXT    NOT NULL PRIMARY KEY,
    state          TEXT    NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
    failures       INTEGER NOT NULL DEFAULT 0,
    opened_at      INTEGER,
    open_until     INTEGER,
    trial_run_id   TEXT,
    trial_step_key TEXT,
    trial_until    INTEGER,
    updated_at     INTEGER NOT NULL
);

CREATE TABLE dead_letters (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     TEXT    NOT NULL REFERENCES runs (id),
    step       TEXT    NOT NULL,
    step_key   TEXT    NOT NULL,
    idx        INTEGER NOT NULL,
    item       TEXT,
    error      TEXT,
    status     TEXT    NOT NULL CHECK (status IN ('open', 'retried', 'dropped')),
    output     TEXT,
    created_at INTEGER NOT NULL,
    closed_at  INTEGER
);
CREATE INDEX dead_letters_open ON dead_letters (id) WHERE status = 'open';
CREATE INDEX dead_letters_run ON dead_letters (run_id, id);

-- A run's request for a slot of a concurrency key: queued (held = 0) or
-- granted (held = 1). Rows of finished runs count for nothing (the slot
-- queries join runs), so a slot whose release was never written is free
-- anyway.
CREATE TABLE concurrency_slots (
    workflow       TEXT    NOT NULL,
    key            TEXT    NOT NULL,
    run_id         TEXT    NOT NULL REFERENCES runs (id),
    run_created_at INTEGER NOT NULL,
    held           INTEGER NOT NULL DEFAULT 0,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (workflow, key, run_id)
);
CREATE INDEX concurrency_slots_run ON concurrency_slots (run_id);

-- Alert deliveries, written in the commit of the occurrence that fires
-- them and delivered by a worker: leased (owner, lease_until) while one is
-- being sent, sent or failed at the end.
CREATE TABLE alert_outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    root_run_id TEXT    NOT NULL,
    alert       TEXT    NOT NULL,
    event       TEXT    NOT NULL,
    step_key    TEXT,
    message     TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT,
    owner       TEXT,
    lease_until INTEGER,
    created_at  INTEGER NOT NULL,
    next_at     INTEGER NOT NULL,
    sent_at     INTEGER
);
CREATE INDEX alert_outbox_due ON alert_outbox (next_at, id) WHERE status = 'pending';
CREATE INDEX alert_outbox_run ON alert_outbox (run_id, id);
