-- 0009_api_tokens: as store/sqlite/migrations/0012_api_tokens.sql, which
-- explains it.
CREATE TABLE api_tokens (
	name       TEXT PRIMARY KEY,
	scope      TEXT NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
	hash       TEXT NOT NULL UNIQUE,
	created_at BIGINT NOT NULL
);
