-- 0009_schedule_fires_open: which fires' runs may still be unfinished, so
-- a fire finds the schedule's unfinished runs (its overlap policy) from a
-- small index instead of the schedule's whole history. A fire sets open =
-- 1; the next fire of the schedule closes those whose run has finished (or
-- was pruned).
ALTER TABLE schedule_fires ADD COLUMN open INTEGER NOT NULL DEFAULT 0;
CREATE INDEX schedule_fires_open ON schedule_fires (workflow, schedule, slot) WHERE open = 1;
