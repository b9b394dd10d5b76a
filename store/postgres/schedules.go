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

const insertFireSQL = `INSERT INTO schedule_fires (workflow, schedule, slot, status, reason, run_id, fired_at, jitter)
	VALUES ($1, $2, $3, 'fired', $4, $5, $6, $7)`

const advanceFireSQL = `UPDATE schedules SET
		last_slot = CASE WHEN $5::boolean OR last_slot >= $3::bigint THEN last_slot ELSE $3::bigint END,
		next_at = CASE WHEN $5::boolean OR $4::bigint IS NULL OR next_at >= $4::bigint THEN next_at ELSE $4::bigint END,
		last_run_id = $6, last_fired_at = $7, updated_at = $7
	WHERE workflow = $1 AND name = $2 AND active AND version = $8
		AND ($5::boolean OR (NOT paused AND since < $3::bigint))`

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

// ScheduleFire records a fired slot, inserts its run and advances the
// schedule, in one transaction.
func (s *Store) ScheduleFire(ctx context.Context, p store.ScheduleFireParams) (store.ScheduleFire, store.Run, error) {
	if err := p.Check(); err != nil {
		return store.ScheduleFire{}, store.Run{}, fmt.Errorf("firing schedule %s/%s: %w", p.Workflow, p.Name, err)
	}
	var f store.ScheduleFire
	var r store.Run
	op := fmt.Sprintf("firing schedule %s/%s at %s", p.Workflow, p.Name, p.Slot.UTC().Format("2006-01-02T15:04:05.999999Z"))
	err := s.write(ctx, op, func(w *wtx) error {
		reason := ""
		if p.Manual {
			reason = "manual"
		}
		now := p.Now.UnixMicro()
		_, err := w.tx.Exec(w.ctx, insertFireSQL, p.Workflow, p.Name, p.Slot.UnixMicro(), sqlrow.TextArg(reason), p.Run.ID, now, p.Jitter.Microseconds())
		switch pgCode(err) {
		case codeUniqueViolation:
			return store.ErrAlreadyFired
		case codeForeignKeyViolation:
			return fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("recording the fire: %w", err)
		}
		tag, err := w.tx.Exec(w.ctx, advanceFireSQL, p.Workflow, p.Name, p.Slot.UnixMicro(), sqlrow.TimeArg(p.NextAt), p.Manual, p.Run.ID, now, p.Version)
		if err != nil {
			return fmt.Errorf("advancing the schedule: %w", err)
		}
		if tag.RowsAffected() == 0 {
			sc, err := one(w.ctx, w.tx, sqlrow.ScanSchedule, selectScheduleSQL, p.Workflow, p.Name)
			if err != nil {
				return fmt.Errorf("reading the schedule: %w", err)
			}
			return store.FireRefused(sc, p)
		}
		var b batch
		if err := w.insertRun(&b, p.Run); err != nil {
			return err
		}
		if err := b.send(w); err != nil {
			return err
		}
		if r, err = w.runGet(p.Run.ID); err != nil {
			return err
		}
		f = store.ScheduleFire{Workflow: p.Workflow, Schedule: p.Name, Slot: p.Slot, Status: store.FireFired,
			Reason: reason, RunID: p.Run.ID, FiredAt: p.Now, Jitter: p.Jitter}
		return nil
	})
	return f, r, err
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
