-- 0004_runs_list_covering: the run listings (`flowrun runs`, the TUI) read
-- id, workflow, version, key, status, created_at and finished_at of a page
-- of runs. finished_at is stored after inputs, outputs and error, so
-- reading it from the row walks the overflow pages of a large input or
-- output. The listing indexes now hold every column a page reads, so a
-- page is read from the indexes alone and never touches those values.
DROP INDEX runs_created;
DROP INDEX runs_status_created;
DROP INDEX runs_workflow_created;
CREATE INDEX runs_created ON runs (created_at, id, status, workflow, version, key, finished_at);
CREATE INDEX runs_status_created ON runs (status, created_at, id, workflow, version, key, finished_at);
CREATE INDEX runs_workflow_created ON runs (workflow, created_at, id, status, version, key, finished_at);
