-- 0015_token_scope_deploy: as store/sqlite/migrations/0017_token_scope_deploy.sql,
-- which explains it.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_scope_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_scope_check
	CHECK (scope IN ('read', 'write', 'deploy', 'admin'));
