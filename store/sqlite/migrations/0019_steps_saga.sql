-- 0019_steps_saga: a run's step count (the run listings' steps_total and
-- steps_done) leaves out the engine's own rows, named with a "~"
-- (store.GraphStep: a saga's controller and compensations). The listing
-- counts a page's step rows from steps_top, as before, and subtracts the
-- engine's rows, found in this index of those rows alone: it is empty for
-- a run without a saga, so the listing reads no more than it did.
CREATE INDEX steps_saga ON steps (run_id, status) WHERE idx = -1 AND iter = -1 AND instr(step, '~') > 0;
