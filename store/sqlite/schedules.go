package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
	sqlite3 "modernc.org/sqlite/lib"
)

// activateScheduleSQL stores one schedule of an activation. A schedule
// whose timing (kind, spec, zone) is unchanged and that was active keeps
// its cursor (since, next_at); any other starts at the activation. Every
// SET expression reads the old row.
const activateScheduleSQL = `INSERT INTO schedules (workflow, name, version, kind, spec, timezone, overlap, catch_up,
		max_catch_up, jitter, inputs, work_dir, paused, active, since, next_at, created_at, updated_at)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, 1, ?13, ?14, ?13, ?13)
	ON CONFLICT (workflow, name) DO UPDATE SET
		version = excluded.version, overlap = excluded.overlap, catch_up = excluded.catch_up,
		max_catch_up = excluded.max_catch_up, jitter = excluded.jitter, inputs = excluded.inputs,
		work_dir = excluded.work_dir,
		since = CASE WHEN schedules.active = 1 AND schedules.kind = excluded.kind AND schedules.spec = excluded.spec
			AND schedules.timezone = excluded.timezone THEN schedules.since ELSE excluded.since END,
		next_at = CASE WHEN schedules.active = 1 AND schedules.kind = excluded.kind AND schedules.spec = excluded.spec
			AND schedules.timezone = excluded.timezone THEN schedules.next_at ELSE excluded.next_at END,
		kind = excluded.kind, spec = excluded.spec, timezone = excluded.timezone,
		active = 1, updated_at = excluded.updated_at`

// deactivateSchedulesSQL stops the workflow's schedules not named in ?3 (a
// JSON array).
const deactivateSchedulesSQL = `UPDATE schedules SET active = 0, updated_at = ?2
	WHERE workflow = ?1 AND active = 1 AND name NOT IN (SELECT value FROM json_each(?3))`

// scheduleDueSQL reads schedules_due: active, unpaused, in next_at order.
const scheduleDueSQL = `SELECT ` + sqlrow.ScheduleCols + ` FROM schedules
	WHERE active = 1 AND paused = 0 AND next_at <= ?1 ORDER BY next_at, workflow, name LIMIT ?2`

// insertFireSQL records a slot, fired (open: its run may be unfinished)
// or skipped; its primary key refuses a second record of the slot (no row
// inserted).
const insertFireSQL = `INSERT INTO schedule_fires (workflow, schedule, slot, status, reason, run_id, fired_at, jitter, open)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?6 IS NOT NULL) ON CONFLICT (workflow, schedule, slot) DO NOTHING`

// advanceFireSQL moves a schedule's cursor past a slot, only while the
// fire may apply: active, at the version, not paused and the slot after
// since (a manual trigger, ?5 = 1, needs neither and moves no cursor).
// Cursors only move forward.
const advanceFireSQL = `UPDATE schedules SET
		last_slot = CASE WHEN ?5 = 1 OR last_slot >= ?3 THEN last_slot ELSE ?3 END,
		next_at = CASE WHEN ?5 = 1 OR ?4 IS NULL OR next_at >= ?4 THEN next_at ELSE ?4 END,
		updated_at = ?6
	WHERE workflow = ?1 AND name = ?2 AND active = 1 AND version = ?7 AND (?5 = 1 OR (paused = 0 AND since < ?3))`

// lastRunSQL records the run of a fire on its schedule.
const lastRunSQL = `UPDATE schedules SET last_run_id = ?3, last_fired_at = ?4 WHERE workflow = ?1 AND name = ?2`

// closeFiresSQL closes the open fires of a schedule whose run finished or
// is gone; openFiresSQL lists the runs of those still open.
const closeFiresSQL = `UPDATE schedule_fires SET open = 0 WHERE workflow = ?1 AND schedule = ?2 AND open = 1
	AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = schedule_fires.run_id AND r.status NOT IN ('completed', 'failed', 'canceled'))`

const openFiresSQL = `SELECT run_id FROM schedule_fires WHERE workflow = ?1 AND schedule = ?2 AND open = 1 ORDER BY slot`

const insertSkipSQL = `INSERT INTO schedule_fires (workflow, schedule, slot, status, reason, fired_at)
	VALUES (?1, ?2, ?3, 'skipped', ?4, ?5) ON CONFLICT DO NOTHING`

const advanceSkipSQL = `UPDATE schedules SET
		last_slot = CASE WHEN ?3 IS NULL OR last_slot >= ?3 THEN last_slot ELSE ?3 END,
		next_at = CASE WHEN ?4 IS NULL OR next_at >= ?4 THEN next_at ELSE ?4 END,
		updated_at = ?5
	WHERE workflow = ?1 AND name = ?2`

// The savepoint of each fire of a batch.
const (
	savepointSQL  = `SAVEPOINT fire`
	rollbackToSQL = `ROLLBACK TO fire`
	releaseSQL    = `RELEASE fire`
)

const selectScheduleSQL = `SELECT ` + sqlrow.ScheduleCols + ` FROM schedules WHERE workflow = ?1 AND name = ?2`

// SchedulesActivate makes a version's schedules the workflow's active ones.
func (s *Store) SchedulesActivate(ctx context.Context, p store.SchedulesActivateParams) ([]store.Schedule, error) {
	var out []store.Schedule
	err := s.write(ctx, "activating the schedules of "+p.Workflow+" "+p.Version, func(w *wtx) error {
		for _, d := range p.Schedules {
			_, err := w.exec(activateScheduleSQL, sqlrow.ScheduleDefArgs(&p, d)...)
			if sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
				return fmt.Errorf("workflow %s version %s: %w", p.Workflow, p.Version, store.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("storing schedule %s: %w", d.Name, err)
			}
		}
		names, err := json.Marshal(sqlrow.ScheduleNames(&p))
		if err != nil {
			return err
		}
		if _, err := w.exec(deactivateSchedulesSQL, p.Workflow, p.Now.UnixMicro(), string(names)); err != nil {
			return fmt.Errorf("stopping the schedules %s %s dropped: %w", p.Workflow, p.Version, err)
		}
		out, err = writeAll(w, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleCols+` FROM schedules
			WHERE workflow = ?1 AND active = 1 ORDER BY name`, p.Workflow)
		return err
	})
	return out, err
}

// ScheduleGet returns one schedule.
func (s *Store) ScheduleGet(ctx context.Context, workflow, name string) (store.Schedule, error) {
	sc, err := sqlrow.ScanSchedule(s.queryRow(ctx, selectScheduleSQL, workflow, name))
	if errors.Is(err, sql.ErrNoRows) {
		return sc, fmt.Errorf("schedule %s/%s: %w", workflow, name, store.ErrNotFound)
	}
	return sc, s.fail("reading schedule "+workflow+"/"+name, err)
}

// ScheduleList lists schedules by workflow and name.
func (s *Store) ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error) {
	var out []store.Schedule
	var err error
	if p.Workflow == "" {
		out, err = readAll(ctx, s, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleCols+` FROM schedules
			WHERE active = 1 OR ?1 ORDER BY workflow, name`, p.Inactive)
	} else {
		out, err = readAll(ctx, s, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleCols+` FROM schedules
			WHERE workflow = ?1 AND (active = 1 OR ?2) ORDER BY name`, p.Workflow, p.Inactive)
	}
	return out, s.fail("listing schedules", err)
}

// SchedulePause pauses or resumes a schedule.
func (s *Store) SchedulePause(ctx context.Context, p store.SchedulePauseParams) (store.Schedule, error) {
	var sc store.Schedule
	err := s.write(ctx, "pausing schedule "+p.Workflow+"/"+p.Name, func(w *wtx) error {
		var err error
		sc, err = sqlrow.ScanSchedule(w.queryRow(`UPDATE schedules SET
				since = CASE WHEN paused = 1 AND ?3 = 0 THEN ?4 ELSE since END,
				next_at = CASE WHEN paused = 1 AND ?3 = 0 THEN ?5 ELSE next_at END,
				paused = ?3, updated_at = ?4
			WHERE workflow = ?1 AND name = ?2 RETURNING `+sqlrow.ScheduleCols,
			p.Workflow, p.Name, p.Paused, p.Now.UnixMicro(), sqlrow.TimeArg(p.NextAt)))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		return err
	})
	return sc, err
}

// ScheduleDue returns the due schedules, earliest first.
func (s *Store) ScheduleDue(ctx context.Context, p store.ScheduleDueParams) ([]store.Schedule, error) {
	out, err := readAll(ctx, s, sqlrow.ScanSchedule, scheduleDueSQL, p.Now.UnixMicro(), max(p.Limit, 1))
	return out, s.fail("reading the due schedules", err)
}

// ScheduleFire advances the schedule, applies its overlap policy, records
// the slot and inserts its run, in one transaction; a slot already
// recorded is refused by the primary key of schedule_fires.
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
// savepoint of its own (sqlrow.FireBatch).
func (s *Store) ScheduleFireBatch(ctx context.Context, ps []store.ScheduleFireParams) ([]store.ScheduleFireOutcome, error) {
	var out []store.ScheduleFireOutcome
	err := s.write(ctx, fmt.Sprintf("firing %d schedule slots", len(ps)), func(w *wtx) error {
		var err error
		out, err = sqlrow.FireBatch(fireTx{w}, ps)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fireTx is a write transaction as sqlrow.FireBatch uses it.
type fireTx struct{ w *wtx }

func (f fireTx) Savepoint() error  { _, err := f.w.exec(savepointSQL); return err }
func (f fireTx) RollbackTo() error { _, err := f.w.exec(rollbackToSQL); return err }
func (f fireTx) Release() error    { _, err := f.w.exec(releaseSQL); return err }
func (f fireTx) Fire(p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	return f.w.fire(p)
}

// Aborts is false: SQLite aborts no transaction under another's feet (a
// busy database fails the fire's statement, and the fire with it).
func (f fireTx) Aborts(error) bool               { return false }
func (f fireTx) Fail(op string, err error) error { return f.w.s.fail(op, err) }

// selectKeyNewestSQL reads the newest run with a key (RunInsertKeyed's
// read).
const selectKeyNewestSQL = `SELECT ` + runCols + ` FROM runs WHERE workflow = ?1 AND key = ?2
	ORDER BY created_at DESC, id DESC LIMIT 1`

// fire does a fire's writes in w: ErrAlreadyFired, with the caller to
// roll back what it wrote, when the slot is recorded already.
func (w *wtx) fire(p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	var res store.ScheduleFireResult
	now, slot := p.Now.UnixMicro(), p.Slot.UnixMicro()
	n, err := w.execN(advanceFireSQL, p.Workflow, p.Name, slot, sqlrow.TimeArg(p.NextAt), p.Manual, now, p.Version)
	if err != nil {
		return res, fmt.Errorf("advancing the schedule: %w", err)
	}
	if n == 0 {
		sc, err := sqlrow.ScanSchedule(w.queryRow(selectScheduleSQL, p.Workflow, p.Name))
		if errors.Is(err, sql.ErrNoRows) {
			return res, fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		if err != nil {
			return res, fmt.Errorf("reading the schedule: %w", err)
		}
		return res, store.FireRefused(sc, p)
	}
	if _, err := w.exec(closeFiresSQL, p.Workflow, p.Name); err != nil {
		return res, fmt.Errorf("closing finished fires: %w", err)
	}
	res.Unfinished, err = writeAll(w, sqlrow.ScanString, openFiresSQL, p.Workflow, p.Name)
	if err != nil {
		return res, fmt.Errorf("reading the unfinished runs: %w", err)
	}
	res.Fire = store.NewFire(p, len(res.Unfinished) > 0)
	f := &res.Fire
	if f.Status == store.FireFired && p.KeyHeld != nil && p.Run.Key != "" {
		old, err := sqlrow.ScanRun(w.queryRow(selectKeyNewestSQL, p.Run.Workflow, p.Run.Key))
		switch {
		case err == nil:
			held, err := p.KeyHeld(old)
			if err != nil {
				return res, err
			}
			if held {
				f.SkipForKey(old.ID)
			}
		case !errors.Is(err, sql.ErrNoRows):
			return res, fmt.Errorf("reading the run of the key: %w", err)
		}
	}
	n, err = w.execN(insertFireSQL, p.Workflow, p.Name, slot, string(f.Status), sqlrow.TextArg(f.Reason), sqlrow.TextArg(f.RunID), now, f.Jitter.Microseconds())
	if err != nil {
		return res, fmt.Errorf("recording the fire: %w", err)
	}
	if n == 0 {
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
	if _, err := w.exec(lastRunSQL, p.Workflow, p.Name, p.Run.ID, now); err != nil {
		return res, fmt.Errorf("recording the run on the schedule: %w", err)
	}
	if err := w.insertRun(p.Run); err != nil {
		return res, err
	}
	res.Run, err = sqlrow.ScanRun(w.queryRow(selectRunSQL, p.Run.ID))
	return res, err
}

// ScheduleSkip records skipped slots.
func (s *Store) ScheduleSkip(ctx context.Context, p store.ScheduleSkipParams) (int, error) {
	recorded := 0
	err := s.write(ctx, "recording skipped slots of "+p.Workflow+"/"+p.Name, func(w *wtx) error {
		recorded = 0
		last := store.LastSlot(p.Slots)
		n, err := w.execN(advanceSkipSQL, p.Workflow, p.Name, sqlrow.TimeArg(last), sqlrow.TimeArg(p.NextAt), p.Now.UnixMicro())
		if err != nil {
			return fmt.Errorf("advancing the schedule: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotFound)
		}
		for _, slot := range p.Slots {
			n, err := w.execN(insertSkipSQL, p.Workflow, p.Name, slot.UnixMicro(), sqlrow.TextArg(p.Reason), p.Now.UnixMicro())
			if err != nil {
				return fmt.Errorf("recording a skipped slot: %w", err)
			}
			recorded += int(n)
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
		out, err = readAll(ctx, s, sqlrow.ScanScheduleFire, `SELECT `+sqlrow.ScheduleFireCols+` FROM schedule_fires
			WHERE run_id = ?1 ORDER BY slot DESC`, p.RunID)
	} else {
		limit := p.Limit
		if limit < 1 {
			limit = -1
		}
		out, err = readAll(ctx, s, sqlrow.ScanScheduleFire, `SELECT `+sqlrow.ScheduleFireCols+` FROM schedule_fires
			WHERE workflow = ?1 AND schedule = ?2 ORDER BY slot DESC LIMIT ?3`, p.Workflow, p.Name, limit)
	}
	return out, s.fail("listing schedule fires", err)
}
