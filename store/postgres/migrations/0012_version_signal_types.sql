-- 0012_version_signal_types: the JSON of each version's typed waits
-- ({signal name: [{"step":..., "type":...}, ...]}), so that sending a
-- signal checks its data without reading the graph. NULL means unknown (a
-- version or revision stored before it was recorded): the signal then
-- reads the graph, as before, until the same graph is stored again.
-- TEXT, not JSONB: the store keeps the caller's bytes and never queries
-- inside them. The graph is TOASTed out of line, so the row is read
-- without it; the (workflow, hash) indexes serve the lookup.
-- (SQLite: 0015, with covering indexes.)
ALTER TABLE workflow_versions ADD COLUMN signal_types TEXT;
ALTER TABLE version_revisions ADD COLUMN signal_types TEXT;
