-- 0007_version_steps: the number of top-level steps of each version's graph,
-- so that a run summary's steps_total is the size of its graph (not the
-- steps started so far) without decoding graphs. NULL for versions stored
-- before it was recorded until they are stored again (apply of the same
-- file); their runs then count their step rows, as before.
-- The column is stored after the graph, so reading it from the row would
-- walk the graph's overflow pages (see 0006): runs reads it from an index.
ALTER TABLE workflow_versions ADD COLUMN steps INTEGER;
CREATE INDEX workflow_versions_steps ON workflow_versions (workflow, version, steps);
