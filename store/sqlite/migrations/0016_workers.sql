-- 0016_workers: the registry of worker processes (store/workers.go). A
-- worker upserts its row at start and at every heartbeat, with the
-- instant its registration lapses (expires_at), and deletes it when it
-- stops gracefully. Nothing that decides who runs what reads this table.
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
