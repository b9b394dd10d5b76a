-- 0012_api_tokens: the bearer tokens of flowrun serve. Only the hex
-- SHA-256 of a token is kept (store/tokens.go says why that is enough);
-- a request's token is looked up by that hash. A revoked token's row is
-- deleted.
CREATE TABLE api_tokens (
	name       TEXT PRIMARY KEY,
	scope      TEXT NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
	hash       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);
