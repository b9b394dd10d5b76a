-- 0006_schedule_fires_open: as store/sqlite/migrations/
-- 0009_schedule_fires_open.sql, which explains it.
ALTER TABLE schedule_fires ADD COLUMN open BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX schedule_fires_open ON schedule_fires (workflow, schedule, slot) WHERE open;
