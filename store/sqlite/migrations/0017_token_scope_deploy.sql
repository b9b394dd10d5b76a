-- 0017_token_scope_deploy: tokens may have the scope deploy (between write
-- and admin: it also stores workflow versions). SQLite cannot change a
-- CHECK constraint, so the table is rebuilt with its rows.
CREATE TABLE api_tokens_new (
	name       TEXT PRIMARY KEY,
	scope      TEXT NOT NULL CHECK (scope IN ('read', 'write', 'deploy', 'admin')),
	hash       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);
INSERT INTO api_tokens_new (name, scope, hash, created_at)
	SELECT name, scope, hash, created_at FROM api_tokens;
DROP TABLE api_tokens;
ALTER TABLE api_tokens_new RENAME TO api_tokens;
