-- 0018_version_sources: the text of the file a graph was stored from, by
-- the graph's hash, for people to read (the web dashboard). Optional: a
-- graph stored before, or by a caller without a file, has none.
CREATE TABLE version_sources (
	workflow  TEXT NOT NULL,
	hash      TEXT NOT NULL,
	name      TEXT NOT NULL,
	source    BLOB NOT NULL,
	stored_at INTEGER NOT NULL,
	PRIMARY KEY (workflow, hash)
);
