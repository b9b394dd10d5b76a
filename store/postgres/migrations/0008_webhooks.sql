-- 0008_webhooks: as store/sqlite/migrations/0011_webhooks.sql, which
-- explains it.
ALTER TABLE workflow_versions ADD COLUMN work_dir TEXT;
CREATE TABLE webhook_deliveries (
  workflow    TEXT COLLATE "C" NOT NULL,
  webhook     TEXT COLLATE "C" NOT NULL,
  delivery_id TEXT COLLATE "C" NOT NULL,
  run_id      TEXT COLLATE "C" NOT NULL,
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (workflow, webhook, delivery_id)
);
CREATE INDEX webhook_deliveries_run ON webhook_deliveries (run_id);
