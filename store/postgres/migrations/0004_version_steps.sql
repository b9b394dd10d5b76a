-- 0004_version_steps: the number of top-level steps of each version's graph,
-- so that a run summary's steps_total is the size of its graph (not the
-- steps started so far) without decoding graphs. NULL for versions stored
-- before it was recorded until they are stored again (apply of the same
-- file); their runs then count their step rows, as before.
ALTER TABLE workflow_versions ADD COLUMN steps INTEGER;
