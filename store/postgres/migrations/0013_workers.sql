-- 0013_workers: as store/sqlite/migrations/0016_workers.sql, which
-- explains it. last_seen and expires_at are written from the database's
-- clock, never a worker host's.
CREATE TABLE workers (
	id          TEXT PRIMARY KEY,
	host        TEXT NOT NULL,
	pid         INTEGER NOT NULL,
	version     TEXT NOT NULL,
	concurrency INTEGER NOT NULL,
	held        INTEGER NOT NULL,
	started_at  BIGINT NOT NULL,
	last_seen   BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL
);
