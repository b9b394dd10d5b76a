-- 0001_init: the core schema of flowrun's Postgres store. The same tables,
-- columns and indexes as store/sqlite/migrations/0001_init.sql; every
-- difference of dialect is commented where it is.
--
-- Conventions (store/postgres/scan.go reads and writes them):
--   * times are BIGINT unix microseconds, UTC; a zero time.Time is NULL
--     (columns that can never be zero are NOT NULL). (SQLite: INTEGER, which
--     is 64-bit there. Not timestamptz: the same integers on both backends,
--     and no time zone conversion anywhere.)
--   * JSON is TEXT; an empty json.RawMessage is NULL. (Not JSONB: JSONB
--     rewrites the document, key order and spacing, so the bytes read back
--     would differ from the bytes written and from SQLite's. Nothing queries
--     inside the JSON.)
--   * optional text (run key, lease owner, parent, detail, ...) is NULL when
--     empty.
--   * text that is compared or ordered (ids, workflow names, owners) is
--     COLLATE "C": byte order, as SQLite's BINARY collation, whatever the
--     database's locale. Run id prefix search and every ORDER BY ... id
--     depend on it.
-- The tables live in the first schema of the search_path (a DSN may set
-- search_path to give flowrun a schema of its own).
-- Later migrations add breakers, dead letters and concurrency leases; this
-- file never changes once released.

CREATE TABLE workflow_versions (
    workflow   TEXT COLLATE "C" NOT NULL,
    version    TEXT COLLATE "C" NOT NULL,
    major      INTEGER NOT NULL,
    minor      INTEGER NOT NULL,
    patch      INTEGER NOT NULL,
    hash       TEXT COLLATE "C" NOT NULL,
    -- (SQLite: BLOB.)
    graph      BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (workflow, version)
);
CREATE INDEX workflow_versions_semver ON workflow_versions (workflow, major, minor, patch);
CREATE INDEX workflow_versions_hash ON workflow_versions (workflow, hash);

CREATE TABLE runs (
    id               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workflow         TEXT COLLATE "C" NOT NULL,
    version          TEXT COLLATE "C" NOT NULL,
    graph_hash       TEXT COLLATE "C" NOT NULL,
    key              TEXT COLLATE "C",
    status           TEXT    NOT NULL CHECK (status IN
                         ('pending', 'running', 'waiting', 'blocked', 'completed', 'failed', 'canceled')),
    inputs           TEXT,
    outputs          TEXT,
    error            TEXT,
    created_at       BIGINT  NOT NULL,
    started_at       BIGINT,
    finished_at      BIGINT,
    available_at     BIGINT  NOT NULL,
    deadline_at      BIGINT,
    lease_owner      TEXT COLLATE "C",
    lease_epoch      BIGINT  NOT NULL DEFAULT 0,
    lease_expires_at BIGINT,
    parent_run_id    TEXT COLLATE "C" REFERENCES runs (id),
    parent_step_key  TEXT COLLATE "C",
    root_run_id      TEXT COLLATE "C" NOT NULL,
    attempts_used    INTEGER NOT NULL DEFAULT 0,
    -- (SQLite: INTEGER 0/1; Postgres has a real BOOLEAN.)
    cancel_requested BOOLEAN NOT NULL DEFAULT false,
    -- wake_pending is set by a signal or a wake that arrives while the run
    -- may be leased; a later write of available_at is then pulled to "now",
    -- so a worker that parks the run without having seen the news does not
    -- sleep through it. Every claim resets it.
    wake_pending     BOOLEAN NOT NULL DEFAULT false,
    wait_reason      TEXT,
    updated_at       BIGINT  NOT NULL
);
-- The claim: due, claimable runs in (available_at, id) order. Partial, so
-- finished runs (most of the table) are not in it.
CREATE INDEX runs_claim ON runs (available_at, id) WHERE status IN ('pending', 'running', 'waiting');
CREATE INDEX runs_key ON runs (workflow, key, created_at) WHERE key IS NOT NULL;
CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_status_created ON runs (status, created_at, id);
CREATE INDEX runs_workflow_created ON runs (workflow, created_at, id);
CREATE INDEX runs_root ON runs (root_run_id);
CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE steps (
    -- seq keeps the order in which step keys were first written; an upsert
    -- of an existing key keeps its seq. (SQLite: the implicit rowid.)
    seq         BIGINT  GENERATED ALWAYS AS IDENTITY,
    run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    key         TEXT COLLATE "C" NOT NULL,
    step        TEXT COLLATE "C" NOT NULL,
    idx         INTEGER NOT NULL DEFAULT -1,
    iter        INTEGER NOT NULL DEFAULT -1,
    status      TEXT    NOT NULL CHECK (status IN
                    ('pending', 'running', 'waiting', 'completed', 'failed', 'skipped', 'canceled')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    output      TEXT,
    error       TEXT,
    started_at  BIGINT,
    finished_at BIGINT,
    wake_at     BIGINT,
    detail      TEXT,
    state       TEXT,
    PRIMARY KEY (run_id, key)
);
-- StepList reads a run's keys in seq order. (SQLite: the rowid order needs
-- no index of its own.)
CREATE INDEX steps_order ON steps (run_id, seq);
-- Step counts of run listings: top-level steps only (no foreach items, no
-- until iterations), covering so the count never reads the step rows.
CREATE INDEX steps_top ON steps (run_id, status) WHERE idx = -1 AND iter = -1;

CREATE TABLE step_attempts (
    -- (SQLite: INTEGER PRIMARY KEY, the rowid.)
    id              BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    step_key        TEXT COLLATE "C" NOT NULL,
    attempt         INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN
                        ('running', 'completed', 'failed', 'interrupted', 'canceled')),
    owner           TEXT COLLATE "C",
    started_at      BIGINT,
    finished_at     BIGINT,
    output          TEXT,
    error           TEXT,
    idempotency_key TEXT COLLATE "C",
    UNIQUE (run_id, step_key, attempt)
);
-- AttemptList reads a run's attempts in id order. (SQLite: the rowid order
-- needs no index of its own.)
CREATE INDEX step_attempts_run ON step_attempts (run_id, id);

-- Event ids are cursors (flowrun logs --follow, the TUI) and must never be
-- reused: an identity column never hands out a value twice. (SQLite:
-- AUTOINCREMENT.) A sequence hands ids out in call order, not commit order;
-- the store makes the two agree by appending events under a lock at the
-- end of each transaction (see store/postgres/tx.go).
CREATE TABLE events (
    id       BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id   TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    at       BIGINT  NOT NULL,
    kind     TEXT COLLATE "C" NOT NULL,
    step_key TEXT COLLATE "C",
    data     TEXT
);
CREATE INDEX events_run ON events (run_id, id);

CREATE TABLE signals (
    -- (SQLite: INTEGER PRIMARY KEY AUTOINCREMENT.)
    id          BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    name        TEXT COLLATE "C" NOT NULL,
    payload     TEXT,
    created_at  BIGINT  NOT NULL,
    consumed_by TEXT COLLATE "C",
    consumed_at BIGINT
);
CREATE INDEX signals_run ON signals (run_id, id);
