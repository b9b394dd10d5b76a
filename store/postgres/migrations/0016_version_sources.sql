-- 0016_version_sources: the text of the file a graph was stored from, by
-- the graph's hash, for people to read (the web dashboard). Optional: a
-- graph stored before, or by a caller without a file, has none.
CREATE TABLE version_sources (
    workflow  TEXT COLLATE "C" NOT NULL,
    hash      TEXT COLLATE "C" NOT NULL,
    name      TEXT NOT NULL,
    source    BYTEA NOT NULL,
    stored_at BIGINT NOT NULL,
    PRIMARY KEY (workflow, hash)
);
