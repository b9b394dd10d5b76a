package postgres

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// The statements of store/sqlite/schedules.go, which explains them, in
// Postgres's dialect. A second fire of a slot waits on the primary key of
// schedule_fires until the first commits, then fails on it.

const activateScheduleSQL = `INSERT INTO schedules (workflow, name, version, kind, spec, timezone, overlap, catch_up,
		max_catch_up, jitter, inputs, work_dir, paused, active, since, next_at, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, false, true, $13, $14, $13, $13)
	ON CONFLICT (workflow, name) DO UPDATE SET
		version = excluded.version, overlap = excluded.overlap, catch_up = excluded.catch_up,
		max_catch_up = excluded.max_catch_up, jitter = excluded.jitter, inputs = excluded.inputs,
		work_dir = excluded.work_dir,
		since = CASE WHEN schedules.active AND schedules.kind = excluded.kind AND schedules.spec = excluded.spec
			AND schedules.timezone = excluded.timezone THEN schedules.since ELSE excluded.since END,
		next_at = CASE WHEN schedules.active AND schedules.kind = excluded.kind AND schedules.spec = excluded.spec
			AND schedules.timezone = excluded.timezone THEN schedules.next_at ELSE excluded.next_at END,
		kind = excluded.kind, spec = excluded.spec, timezone = excluded.timezone,
		active = true, updated_at = excluded.updated_at`

const deactivateSchedulesSQL = `UPDATE schedules SET active = false, updated_at = $2
	WHERE workflow = $1 AND active AND name <> ALL($3::text[])`

// scheduleDueSQL reads schedules_due.
const scheduleDueSQL = `SELECT ` + sqlrow.ScheduleCols + ` FROM schedules
	WHERE active AND NOT paused AND next_at <= $1 ORDER BY next_at, workflow, name LIMIT $2`

const insertFireSQL = `INSERT INTO schedule_fires (workflow, schedule, slot, status, reason, run_id, fired_at, jitter, open)
	VALUES ($1, $2, $3, $4, $5, $6::text, $7, $8, $6::text IS NOT NULL)
	ON CONFLICT (workflow, schedule, slot) DO NOTHING`

// advanceFireSQL also takes the schedule's row lock, held to the commit:
// a concurrent fire of the schedule waits here, then reads the fires this
// one committed.
const advanceFireSQL = `UPDATE schedules SET
		last_slot = CASE WHEN $5::boolean OR last_slot >= $3::bigint THEN last_slot ELSE $3::bigint END,
		next_at = CASE WHEN $5::boolean OR $4::bigint IS NULL OR next_at >= $4::bigint THEN next_at ELSE $4::bigint END,
		updated_at = $6
	WHERE workflow = $1 AND name = $2 AND active AND version = $7
		AND ($5::boolean OR (NOT paused AND since < $3::bigint))`

const lastRunSQL = `UPDATE schedules SET last_run_id = $3, last_fired_at = $4 WHERE workflow = $1 AND name = $2`

const closeFiresSQL = `UPDATE schedule_fires f SET open = false WHERE f.workflow = $1 AND f.schedule = $2 AND f.open
	AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = f.run_id AND r.status NOT IN ('completed', 'failed', 'canceled'))`

const openFiresSQL = `SELECT run_id FROM schedule_fires WHERE workflow = $1 AND schedule = $2 AND open ORDER BY slot`

const insertSkipSQL = `INSERT INTO schedule_fires (workflow, schedule, slot, status, reason, fired_at)
	VALUES ($1, $2, $3, 'skipped', $4, $5) ON CONFLICT DO NOTHING`

const advanceSkipSQL = `UPDATE schedules SET
		last_slot = CASE WHEN $3::bigint IS NULL OR last_slot >= $3::bigint THEN last_slot ELSE $3::bigint END,
		next_at = CASE WHEN $4::bigint IS NULL OR next_at >= $4::bigint THEN next_at ELSE $4::bigint END,
		updated_at = $5
	WHERE workflow = $1 AND name = $2`

const selectScheduleSQL = `SELECT ` + sqlrow.ScheduleCols + ` FROM schedules WHERE workflow = $1 AND name = $2`

// SchedulesActivate makes a version's schedules the workflow's active ones.
func (s *Store) SchedulesActivate(ctx context.Context, p store.SchedulesActivateParams) ([]store.Schedule, error) {
	var out []store.Schedule
	err := s.write(ctx, "activating the schedules of "+p.Workflow+" "+p.Version, func(w *wtx) error {
		for _, d := range p.Schedules {
			_, err := w.tx.Exec(w.ctx, activateScheduleSQL, sqlrow.ScheduleDefArgs(&p, d)...)
			if pgCode(err) == codeForeignKeyViolation {
				return fmt.Errorf("workflow %s version %s: %w", p.Workflow, p.Version, store.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("storing schedule %s: %w", d.Name, err)
			}
		}
		if _, err := w.tx.Exec(w.ctx, deactivateSchedulesSQL, p.Workflow, p.Now.UnixMicro(), sqlrow.ScheduleNames(&p)); err != nil {
			return fmt.Errorf("stopping the schedules %s %s dropped: %w", p.Workflow, p.Version, err)
		}
		var err error
		out, err = all(w.ctx, w.tx, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleCols+` FROM schedules
			WHERE workflow = $1 AND active ORDER BY name`, p.Workflow)
		return err
	})
	return out, err
}

// ScheduleGet returns one schedule.
func (s *Store) ScheduleGet(ctx context.Context, workflow, name string) (store.Schedule, error) {
	sc, err := one(ctx, s.pool, sqlrow.ScanSchedule, selectScheduleSQL, workflow, name)
	if noRows(err) {
		return sc, fmt.Errorf("schedule %s/%s: %w", workflow, name, store.ErrNotFound)
	}
	return sc, s.fail("reading schedule "+workflow+"/"+name, err)
}

// ScheduleList lists schedules by workflow and name.
func (s *Store) ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error) {
	var out []store.Schedule
	var err error
	if p.Workflow == "" {
		out, err = all(ctx, s.pool, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleCols+` FROM schedules
			WHERE active OR $1 ORDER BY workflow, name`, p.Inactive)
	} else {
		out, err = all(ctx, s.pool, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleCols+` FROM schedules
			WHERE workflow = $1 AND (active OR $2) ORDER BY name`, p.Workflow, p.Inactive)
	}
	return out, s.fail("listing schedules", err)
}

// SchedulePause pauses or resumes a schedule.
func (s *Store) SchedulePause(ctx context.Context, p store.SchedulePauseParams) (store.Schedule, error) {
	var sc store.Schedule
	err := s.write(ctx, "pausing schedule "+p.Workflow+"/"+p.Name, func(w *wtx) error {
		var err error
		sc, err = one(w.ctx, w.tx, sqlrow.ScanSchedule, `UPDATE schedules SET
				since = CASE WHEN paused AND NOT $3::boolean THEN $4::bigint ELSE since END,
				next_at = CASE WHEN paused AND NOT $3::boolean THEN $5::bigint ELSE next_at END,
				paused = $3, updated_at = $4
			WHERE workflow = $1 AND name = $2 RETURNING `+sqlrow.ScheduleCols,
			p.Workflow, p.Name, p.Paused, p.Now.UnixMicro(), sqlrow.TimeArg(p.NextAt))
		if noRows(err) {
			return fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		return err
	})
	return sc, err
}

// ScheduleDue returns the due schedules, earliest first.
func (s *Store) ScheduleDue(ctx context.Context, p store.ScheduleDueParams) ([]store.Schedule, error) {
	out, err := all(ctx, s.pool, sqlrow.ScanSchedule, scheduleDueSQL, p.Now.UnixMicro(), max(p.Limit, 1))
	return out, s.fail("reading the due schedules", err)
}

// ScheduleFire advances the schedule, applies its overlap policy, records
// the slot and inserts its run, in one transaction.
func (s *Store) ScheduleFire(ctx context.Context, p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	if err := p.Check(); err != nil {
		return store.ScheduleFireResult{}, fmt.Errorf("firing schedule %s/%s: %w", p.Workflow, p.Name, err)
	}
	var res store.ScheduleFireResult
	err := s.write(ctx, sqlrow.FireOp(p), func(w *wtx) error {
		var err error
		res, err = w.fire(p)
		return err
	})
	return res, err
}

// ScheduleFireBatch fires many slots in one transaction, each in a
// savepoint of its own (sqlrow.FireBatch). A deadlock or serialization
// failure is the transaction's (write runs it again from the start), not a
// fire's.
func (s *Store) ScheduleFireBatch(ctx context.Context, ps []store.ScheduleFireParams) ([]store.ScheduleFireOutcome, error) {
	var out []store.ScheduleFireOutcome
	err := s.write(ctx, fmt.Sprintf("firing %d schedule slots", len(ps)), func(w *wtx) error {
		var err error
		out, err = sqlrow.FireBatch(&fireTx{s: s, w: w}, ps)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fireTx is a write transaction as sqlrow.FireBatch uses it. It remembers
// what the transaction had queued at the savepoint, so that a rolled back
// fire's events go with it.
type fireTx struct {
	s      *Store
	w      *wtx
	events int
	notify bool
}

func (f *fireTx) Savepoint() error {
	f.events, f.notify = len(f.w.events), f.w.notify
	_, err := f.w.tx.Exec(f.w.ctx, "SAVEPOINT fire")
	return err
}

func (f *fireTx) RollbackTo() error {
	if _, err := f.w.tx.Exec(f.w.ctx, "ROLLBACK TO SAVEPOINT fire"); err != nil {
		return err
	}
	f.w.events, f.w.notify = f.w.events[:f.events], f.notify
	return nil
}

func (f *fireTx) Release() error {
	_, err := f.w.tx.Exec(f.w.ctx, "RELEASE SAVEPOINT fire")
	return err
}

func (f *fireTx) Fire(p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	return f.w.fire(p)
}

func (f *fireTx) Aborts(err error) bool {
	code := pgCode(err)
	return code == codeDeadlock || code == codeSerialization
}

func (f *fireTx) Fail(op string, err error) error { return f.s.fail(op, err) }

// fire does a fire's writes in w: ErrAlreadyFired, with the caller to
// roll back what it wrote, when the slot is recorded already.
func (w *wtx) fire(p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	var res store.ScheduleFireResult
	now, slot := p.Now.UnixMicro(), p.Slot.UnixMicro()
	tag, err := w.tx.Exec(w.ctx, advanceFireSQL, p.Workflow, p.Name, slot, sqlrow.TimeArg(p.NextAt), p.Manual, now, p.Version)
	if err != nil {
		return res, fmt.Errorf("advancing the schedule: %w", err)
	}
	if tag.RowsAffected() == 0 {
		sc, err := one(w.ctx, w.tx, sqlrow.ScanSchedule, selectScheduleSQL, p.Workflow, p.Name)
		if noRows(err) {
			return res, fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		if err != nil {
			return res, fmt.Errorf("reading the schedule: %w", err)
		}
		return res, store.FireRefused(sc, p)
	}
	if _, err := w.tx.Exec(w.ctx, closeFiresSQL, p.Workflow, p.Name); err != nil {
		return res, fmt.Errorf("closing finished fires: %w", err)
	}
	if res.Unfinished, err = all(w.ctx, w.tx, sqlrow.ScanString, openFiresSQL, p.Workflow, p.Name); err != nil {
		return res, fmt.Errorf("reading the unfinished runs: %w", err)
	}
	res.Fire = store.NewFire(p, len(res.Unfinished) > 0)
	f := &res.Fire
	if f.Status == store.FireFired && p.KeyHeld != nil && p.Run.Key != "" {
		if _, err := w.tx.Exec(w.ctx, keyLockSQL, p.Run.Workflow, p.Run.Key); err != nil {
			return res, fmt.Errorf("locking the run key: %w", err)
		}
		old, err := one(w.ctx, w.tx, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE workflow = $1 AND key = $2
			ORDER BY created_at DESC, id DESC LIMIT 1`, p.Run.Workflow, p.Run.Key)
		switch {
		case err == nil:
			held, err := p.KeyHeld(old)
			if err != nil {
				return res, err
			}
			if held {
				f.SkipForKey(old.ID)
			}
		case !noRows(err):
			return res, fmt.Errorf("reading the run of the key: %w", err)
		}
	}
	tag, err = w.tx.Exec(w.ctx, insertFireSQL, p.Workflow, p.Name, slot, string(f.Status), sqlrow.TextArg(f.Reason), sqlrow.TextArg(f.RunID), now, f.Jitter.Microseconds())
	if err != nil {
		return res, fmt.Errorf("recording the fire: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return res, store.ErrAlreadyFired
	}
	if f.Status == store.FireSkipped {
		return res, nil
	}
	if p.Overlap == store.OverlapCancelPrevious {
		for _, id := range res.Unfinished {
			if err := w.cancelTree(id, now, nil); err != nil {
				return res, fmt.Errorf("canceling run %s: %w", id, err)
			}
		}
	}
	if _, err := w.tx.Exec(w.ctx, lastRunSQL, p.Workflow, p.Name, p.Run.ID, now); err != nil {
		return res, fmt.Errorf("recording the run on the schedule: %w", err)
	}
	var b batch
	if err := w.insertRun(&b, p.Run); err != nil {
		return res, err
	}
	if err := b.send(w); err != nil {
		return res, err
	}
	res.Run, err = w.runGet(p.Run.ID)
	return res, err
}

// ScheduleSkip records skipped slots.
func (s *Store) ScheduleSkip(ctx context.Context, p store.ScheduleSkipParams) (int, error) {
	recorded := 0
	err := s.write(ctx, "recording skipped slots of "+p.Workflow+"/"+p.Name, func(w *wtx) error {
		recorded = 0
		last := store.LastSlot(p.Slots)
		tag, err := w.tx.Exec(w.ctx, advanceSkipSQL, p.Workflow, p.Name, sqlrow.TimeArg(last), sqlrow.TimeArg(p.NextAt), p.Now.UnixMicro())
		if err != nil {
			return fmt.Errorf("advancing the schedule: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		for _, slot := range p.Slots {
			tag, err := w.tx.Exec(w.ctx, insertSkipSQL, p.Workflow, p.Name, slot.UnixMicro(), sqlrow.TextArg(p.Reason), p.Now.UnixMicro())
			if err != nil {
				return fmt.Errorf("recording a skipped slot: %w", err)
			}
			recorded += int(tag.RowsAffected())
		}
		return nil
	})
	return recorded, err
}

// ScheduleFireList lists fires, newest slot first.
func (s *Store) ScheduleFireList(ctx context.Context, p store.ScheduleFireListParams) ([]store.ScheduleFire, error) {
	var out []store.ScheduleFire
	var err error
	if p.RunID != "" {
		out, err = all(ctx, s.pool, sqlrow.ScanScheduleFire, `SELECT `+sqlrow.ScheduleFireCols+` FROM schedule_fires
			WHERE run_id = $1 ORDER BY slot DESC`, p.RunID)
	} else {
		var limit any // NULL: no limit
		if p.Limit > 0 {
			limit = p.Limit
		}
		out, err = all(ctx, s.pool, sqlrow.ScanScheduleFire, `SELECT `+sqlrow.ScheduleFireCols+` FROM schedule_fires
			WHERE workflow = $1 AND schedule = $2 ORDER BY slot DESC LIMIT $3`, p.Workflow, p.Name, limit)
	}
	return out, s.fail("listing schedule fires", err)
}
