-- 0003_run_workdir_attempt: the directory a run's workflow file was in
-- (relative exec paths and the default exec dir resolve against it; NULL
-- for runs created before it was recorded) and run.attempt (1, plus one
-- per redrive with `flowrun retry`).
ALTER TABLE runs ADD COLUMN work_dir TEXT;
ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
