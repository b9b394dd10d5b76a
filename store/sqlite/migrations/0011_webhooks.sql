-- 0011_webhooks: what flowrun serve needs to start runs for other systems.
-- work_dir is the directory a version was last applied from (NULL: never
-- recorded), where the runs the API and webhooks start execute their
-- commands. webhook_deliveries remembers the delivery id of each webhook
-- request that started a run, so that a redelivery starts nothing; its
-- rows are pruned with their runs.
ALTER TABLE workflow_versions ADD COLUMN work_dir TEXT;
CREATE TABLE webhook_deliveries (
  workflow    TEXT NOT NULL,
  webhook     TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (workflow, webhook, delivery_id)
) WITHOUT ROWID;
CREATE INDEX webhook_deliveries_run ON webhook_deliveries (run_id);
