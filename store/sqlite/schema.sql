-- after migration 22
CREATE TABLE workflow_versions (
    workflow   TEXT    NOT NULL,
    version    TEXT    NOT NULL,
    major      INTEGER NOT NULL,
    minor      INTEGER NOT NULL,
    patch      INTEGER NOT NULL,
    hash       TEXT    NOT NULL,
    graph      BLOB    NOT NULL,
    created_at INTEGER NOT NULL, steps INTEGER, work_dir TEXT, revision INTEGER NOT NULL DEFAULT 1, signal_types TEXT,
    PRIMARY KEY (workflow, version)
);
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
, work_dir TEXT, attempt INTEGER NOT NULL DEFAULT 1, trace_id TEXT, trace_span_id TEXT, trace_parent_span_id TEXT, error_text TEXT);
CREATE INDEX runs_claim ON runs (available_at, id, lease_expires_at, status)
    WHERE status IN ('pending', 'running', 'waiting');
CREATE INDEX runs_key ON runs (workflow, key, created_at) WHERE key IS NOT NULL;
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
    state       TEXT, dropped INTEGER,
    PRIMARY KEY (run_id, key)
);
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
, claim_owner TEXT, claim_until INTEGER);
CREATE INDEX dead_letters_open ON dead_letters (id) WHERE status = 'open';
CREATE INDEX dead_letters_run ON dead_letters (run_id, id);
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
CREATE INDEX runs_created ON runs (created_at, id, status, workflow, version, key, finished_at);
CREATE INDEX runs_status_created ON runs (status, created_at, id, workflow, version, key, finished_at);
CREATE INDEX runs_workflow_created ON runs (workflow, created_at, id, status, version, key, finished_at);
CREATE TABLE run_inputs (
    run_id TEXT NOT NULL PRIMARY KEY REFERENCES runs (id),
    inputs TEXT NOT NULL
);
CREATE INDEX workflow_versions_steps ON workflow_versions (workflow, version, steps);
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
CREATE INDEX schedules_due ON schedules (next_at, workflow, name) WHERE active = 1 AND paused = 0;
CREATE TABLE schedule_fires (
    workflow TEXT    NOT NULL,
    schedule TEXT    NOT NULL,
    slot     INTEGER NOT NULL,
    status   TEXT    NOT NULL CHECK (status IN ('fired', 'skipped')),
    reason   TEXT,
    run_id   TEXT,
    fired_at INTEGER NOT NULL,
    jitter   INTEGER NOT NULL DEFAULT 0, open INTEGER NOT NULL DEFAULT 0, -- microseconds
    PRIMARY KEY (workflow, schedule, slot),
    FOREIGN KEY (workflow, schedule) REFERENCES schedules (workflow, name)
);
CREATE INDEX schedule_fires_run ON schedule_fires (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX schedule_fires_open ON schedule_fires (workflow, schedule, slot) WHERE open = 1;
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
CREATE TABLE webhook_deliveries (
  workflow    TEXT NOT NULL,
  webhook     TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (workflow, webhook, delivery_id)
) WITHOUT ROWID;
CREATE INDEX webhook_deliveries_run ON webhook_deliveries (run_id);
CREATE INDEX workflow_versions_semver ON workflow_versions (workflow, major, minor, patch, version, hash, created_at, revision);
CREATE TABLE version_revisions (
    workflow   TEXT    NOT NULL,
    version    TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    major      INTEGER NOT NULL,
    minor      INTEGER NOT NULL,
    patch      INTEGER NOT NULL,
    hash       TEXT    NOT NULL,
    graph      BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    steps      INTEGER, signal_types TEXT,
    PRIMARY KEY (workflow, version, revision)
);
CREATE INDEX workflow_versions_hash ON workflow_versions (workflow, hash, signal_types);
CREATE INDEX version_revisions_hash ON version_revisions (workflow, hash, signal_types);
CREATE TABLE workers (
	id          TEXT PRIMARY KEY,
	host        TEXT NOT NULL,
	pid         INTEGER NOT NULL,
	version     TEXT NOT NULL,
	concurrency INTEGER NOT NULL,
	held        INTEGER NOT NULL,
	started_at  INTEGER NOT NULL,
	last_seen   INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
);
CREATE TABLE "api_tokens" (
	name       TEXT PRIMARY KEY,
	scope      TEXT NOT NULL CHECK (scope IN ('read', 'write', 'deploy', 'admin')),
	hash       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);
CREATE TABLE version_sources (
	workflow  TEXT NOT NULL,
	hash      TEXT NOT NULL,
	name      TEXT NOT NULL,
	source    BLOB NOT NULL,
	stored_at INTEGER NOT NULL,
	PRIMARY KEY (workflow, hash)
);
CREATE INDEX steps_saga ON steps (run_id, status) WHERE idx = -1 AND iter = -1 AND instr(step, '~') > 0;
CREATE INDEX steps_dropped ON steps (run_id, status) WHERE idx = -1 AND iter = -1 AND dropped = 1;
