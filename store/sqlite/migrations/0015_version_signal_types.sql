-- 0015_version_signal_types: the JSON of each version's typed waits
-- ({signal name: [{"step":..., "type":...}, ...]}), so that sending a
-- signal checks its data without reading the graph. NULL means unknown (a
-- version or revision stored before it was recorded): the signal then
-- reads the graph, as before, until the same graph is stored again.
-- The column is stored after the graph, so reading it from the row would
-- walk the graph's overflow pages (megabytes for a long workflow; see
-- 0006 and 0007): the (workflow, hash) lookups read it from covering
-- indexes instead, which replace the (workflow, hash) ones.
ALTER TABLE workflow_versions ADD COLUMN signal_types TEXT;
ALTER TABLE version_revisions ADD COLUMN signal_types TEXT;
DROP INDEX workflow_versions_hash;
CREATE INDEX workflow_versions_hash ON workflow_versions (workflow, hash, signal_types);
DROP INDEX version_revisions_hash;
CREATE INDEX version_revisions_hash ON version_revisions (workflow, hash, signal_types);
