-- 0014_runs_workflow_status: run listings filtered by workflow and status
-- (flowrun runs --workflow W --status S, GET /v1/runs?workflow=W&status=S)
-- walk this index in their order, newest first, and stop at the page's
-- end. With only runs_workflow_created and runs_status_created the planner
-- read every run of one filter and sorted them, or combined both indexes
-- into a bitmap, depending on statistics that a bulk load leaves unset.
-- (SQLite: its covering runs_status_created and runs_workflow_created
-- serve the listing; the two filters together are rare enough there.)
CREATE INDEX runs_workflow_status_created ON runs (workflow, status, created_at, id);
