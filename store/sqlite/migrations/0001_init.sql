-- 0001_init: the core schema of flowrun's SQLite store.
--
-- Conventions (store/sqlite/scan.go reads and writes them):
--   * times are INTEGER unix microseconds, UTC; a zero time.Time is NULL
--     (columns that can never be zero are NOT NULL);
--   * JSON is TEXT; an empty json.RawMessage is NULL;
--   * optional text (run key, lease owner, parent, detail, ...) is NULL when
--     empty.
-- Later migrations add breakers, dead letters and concurrency leases; this
-- file never changes once released.

CREATE TABLE workflow_versions (
    workflow   TEXT    NOT NULL,
    version    TEXT    NOT NULL,
    major      INTEGER NOT NULL,
    minor      INTEGER NOT NULL,
    patch      INTEGER NOT NULL,
    hash       TEXT    NOT NULL,
    graph      BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (workflow, version)
);
CREATE INDEX workflow_versions_semver ON workflow_versions (workflow, major, minor, patch);
CREATE INDEX workflow_versions_hash ON workflow_versions (workflow, hash);

CREATE TABLE runs (
    id               TEXT    NOT NULL PRIMARY KEY,
    workflow         TEXT    NOT NULL,
    version          TEXT    NOT NULL,
    graph_hash       TEXT    NOT NULL,
    key              TEXT,
    status           TEXT    NOT NULL CHECK (status IN
                         ('pending', 'running', 'waiting', 'blocked', 'completed', 'failed', 'canceled')),
    inputs           TEXT,
    outputs          TEXT,
    error            TEXT,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    available_at     INTEGER NOT NULL,
    deadline_at      INTEGER,
    -- lease_owner and lease_expires_at are NULL together (a free lease)
    -- or set together; the claim tests the expiry alone.
    lease_owner      TEXT,
    lease_epoch      INTEGER NOT NULL DEFAULT 0,
    lease_expires_at INTEGER,
    parent_run_id    TEXT REFERENCES runs (id),
    parent_step_key  TEXT,
    root_run_id      TEXT    NOT NULL,
    attempts_used    INTEGER NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    -- wake_pending is set by a signal or a wake that arrives while the run
    -- may be leased; a later write of available_at is then pulled to "now",
    -- so a worker that parks the run without having seen the news does not
    -- sleep through it. Every claim resets it.
    wake_pending     INTEGER NOT NULL DEFAULT 0,
    wait_reason      TEXT,
    updated_at       INTEGER NOT NULL
);
-- The claim: due, claimable runs in (available_at, id) order. Partial, so
-- finished runs (most of the table) are not in it; covering, so the claim
-- skips runs whose lease is live (they sit at the front: their available_at
-- has passed) without reading their rows.
CREATE INDEX runs_claim ON runs (available_at, id, lease_expires_at, status)
    WHERE status IN ('pending', 'running', 'waiting');
CREATE INDEX runs_key ON runs (workflow, key, created_at) WHERE key IS NOT NULL;
CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_status_created ON runs (status, created_at, id);
CREATE INDEX runs_workflow_created ON runs (workflow, created_at, id);
CREATE INDEX runs_root ON runs (root_run_id);
CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE steps (
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    key         TEXT    NOT NULL,
    step        TEXT    NOT NULL,
    idx         INTEGER NOT NULL DEFAULT -1,
    iter        INTEGER NOT NULL DEFAULT -1,
    status      TEXT    NOT NULL CHECK (status IN
                    ('pending', 'running', 'waiting', 'completed', 'failed', 'skipped', 'canceled')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    output      TEXT,
    error       TEXT,
    started_at  INTEGER,
    finished_at INTEGER,
    wake_at     INTEGER,
    detail      TEXT,
    state       TEXT,
    PRIMARY KEY (run_id, key)
);
-- Step counts of run listings: top-level steps only (no foreach items, no
-- until iterations), covering so the count never reads the step rows.
CREATE INDEX steps_top ON steps (run_id, status) WHERE idx = -1 AND iter = -1;

CREATE TABLE step_attempts (
    id              INTEGER PRIMARY KEY,
    run_id          TEXT    NOT NULL REFERENCES runs (id),
    step_key        TEXT    NOT NULL,
    attempt         INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN
                        ('running', 'completed', 'failed', 'interrupted', 'canceled')),
    owner           TEXT,
    started_at      INTEGER,
    finished_at     INTEGER,
    output          TEXT,
    error           TEXT,
    idempotency_key TEXT,
    UNIQUE (run_id, step_key, attempt)
);

-- AUTOINCREMENT: event ids are cursors (flowrun logs --follow, the TUI) and
-- must never be reused.
CREATE TABLE events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id   TEXT    NOT NULL REFERENCES runs (id),
    at       INTEGER NOT NULL,
    kind     TEXT    NOT NULL,
    step_key TEXT,
    data     TEXT
);
CREATE INDEX events_run ON events (run_id, id);

CREATE TABLE signals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    name        TEXT    NOT NULL,
    payload     TEXT,
    created_at  INTEGER NOT NULL,
    consumed_by TEXT,
    consumed_at INTEGER
);
CREATE INDEX signals_run ON signals (run_id, id);
