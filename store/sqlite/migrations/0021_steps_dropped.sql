-- 0021_steps_dropped: a migration to another version keeps the rows of the
-- steps the new graph no longer has (their history), marked dropped
-- (Transition.DropSteps); a step row written again is part of the run
-- again. The run listings' steps_done leaves them out: steps_total is the
-- bound version's step count, so counting them gave "3/1". As steps_saga,
-- this index holds only the marked rows, empty for a run never migrated.
ALTER TABLE steps ADD COLUMN dropped INTEGER;
CREATE INDEX steps_dropped ON steps (run_id, status) WHERE idx = -1 AND iter = -1 AND dropped = 1;
