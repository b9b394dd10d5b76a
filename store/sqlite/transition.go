package sqlite

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// fenceSQL is the first statement of every transition: it applies the run
// update only while the caller still holds the lease (owner and epoch; a
// zero lease only while nobody holds it). Zero rows means the lease is lost
// and nothing of the transition has been written, so a fenced-off
// transition needs no savepoint: the next transition of the batch simply
// goes on in the same database transaction.
//
// One static statement serves every RunUpdate: a NULL parameter (nil
// pointer) keeps the column, and the ?N flag parameters say whether a
// nullable column is set (to NULL when the new value is zero).
// A transition with Expect also requires the run's status, version and
// graph hash (?21-?23): a compare-and-set, checked in the same statement
// that writes, so two deciders cannot both pass it.
// available_at is pulled forward to now when a signal or a wake arrived
// since the claim (wake_pending) or a cancel is pending, so a worker that
// parks a run without having seen the news does not sleep through it.
const fenceSQL = `UPDATE runs SET
		updated_at = ?4,
		status = COALESCE(?5, status),
		version = COALESCE(?6, version),
		graph_hash = COALESCE(?7, graph_hash),
		outputs = COALESCE(?8, outputs),
		error = COALESCE(?9, error),
		error_text = CASE WHEN ?9 IS NULL THEN error_text ELSE ?24 END,
		available_at = CASE
			WHEN ?10 IS NULL THEN available_at
			WHEN wake_pending = 1 OR (cancel_requested = 1 AND NOT ?17) THEN MIN(?10, ?4)
			ELSE ?10 END,
		finished_at = CASE WHEN ?11 THEN ?12 ELSE finished_at END,
		deadline_at = CASE WHEN ?13 THEN ?14 ELSE deadline_at END,
		attempts_used = COALESCE(?15, attempts_used),
		attempt = COALESCE(?20, attempt),
		wait_reason = CASE WHEN ?16 THEN ?18 ELSE wait_reason END,
		cancel_requested = CASE WHEN ?17 THEN 0 ELSE cancel_requested END,
		lease_owner = CASE WHEN ?19 THEN NULL ELSE lease_owner END,
		lease_expires_at = CASE WHEN ?19 THEN NULL ELSE lease_expires_at END
	WHERE id = ?1
		AND ((?2 = '' AND lease_owner IS NULL) OR (lease_owner = ?2 AND lease_epoch = ?3))
		AND (?21 IS NULL OR (status = ?21 AND version = ?22 AND graph_hash = ?23))`

// lightFenceSQL is fenceSQL for a transition whose run update sets only
// attempts_used (or nothing): the same lease check and compare-and-set,
// same parameters, but a SET of columns that no index of runs holds.
// SQLite rewrites the entries of every index holding a column a SET
// clause names, changed or not, so fenceSQL rewrote five index entries
// of the run (the claim, lease-owner and three listing indexes) at every
// step transition.
const lightFenceSQL = `UPDATE runs SET
		updated_at = ?4,
		attempts_used = COALESCE(?15, attempts_used)
	WHERE id = ?1
		AND ((?2 = '' AND lease_owner IS NULL) OR (lease_owner = ?2 AND lease_epoch = ?3))
		AND (?21 IS NULL OR (status = ?21 AND version = ?22 AND graph_hash = ?23))
		AND ?5 IS NULL AND ?6 IS NULL AND ?7 IS NULL AND ?8 IS NULL AND ?9 IS NULL AND ?10 IS NULL
		AND NOT ?11 AND ?12 IS NULL AND NOT ?13 AND ?14 IS NULL AND NOT ?16 AND NOT ?17
		AND ?18 IS NULL AND NOT ?19 AND ?20 IS NULL AND ?24 IS NULL`

// fenceFor returns the fence statement of a transition: lightFenceSQL when
// its run update changes no column but attempts_used.
func fenceFor(t *store.Transition) string {
	u := t.Run
	if u == nil || (u.Status == nil && u.Version == nil && u.GraphHash == nil && u.Outputs == nil && u.Error == nil &&
		u.AvailableAt == nil && u.FinishedAt == nil && u.DeadlineAt == nil && u.Attempt == nil && u.WaitReason == nil &&
		!u.ClearCancel && !u.Release) {
		return lightFenceSQL
	}
	return fenceSQL
}

// upsertStepSQL writes the whole state of a step key; a zero StartedAt keeps
// the stored one (the first start of the step).
const upsertStepSQL = `INSERT INTO steps (run_id, key, step, idx, iter, status, attempts, output, error,
		started_at, finished_at, wake_at, detail, state)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
	ON CONFLICT (run_id, key) DO UPDATE SET
		step = excluded.step,
		idx = excluded.idx,
		iter = excluded.iter,
		status = excluded.status,
		attempts = excluded.attempts,
		output = excluded.output,
		error = excluded.error,
		started_at = COALESCE(excluded.started_at, steps.started_at),
		finished_at = excluded.finished_at,
		wake_at = excluded.wake_at,
		detail = excluded.detail,
		state = excluded.state,
		dropped = NULL`

// maxStepRows is the most step keys one statement of upsertStepsSQL
// writes.
const maxStepRows = 16

// upsertStepsSQL.get(n) is upsertStepSQL for n step keys of a run (?1) in
// one statement (a transition holds each key once): a transition of a run
// of instant steps writes many, and one statement costs less than n.
var upsertStepsSQL = multiRowSQL(upsertStepSQL, 13, maxStepRows)

// upsertAttemptSQL inserts an attempt or updates it: the status always,
// every other field only when the write sets it (zero keeps the stored
// value), so closing an attempt need not repeat its owner and start.
const upsertAttemptSQL = `INSERT INTO step_attempts (run_id, step_key, attempt, status, owner,
		started_at, finished_at, output, error, idempotency_key)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
	ON CONFLICT (run_id, step_key, attempt) DO UPDATE SET
		status = excluded.status,
		owner = COALESCE(excluded.owner, step_attempts.owner),
		started_at = COALESCE(excluded.started_at, step_attempts.started_at),
		finished_at = COALESCE(excluded.finished_at, step_attempts.finished_at),
		output = COALESCE(excluded.output, step_attempts.output),
		error = COALESCE(excluded.error, step_attempts.error),
		idempotency_key = COALESCE(excluded.idempotency_key, step_attempts.idempotency_key)`

// maxAttemptRows is the most attempts one statement of
// upsertAttemptsSQL writes.
const maxAttemptRows = 16

// upsertAttemptsSQL.get(n) is upsertAttemptSQL for n attempts of a run (?1)
// in one statement (a transition holds each attempt once): the commit
// between two exec steps closes one attempt and opens the next.
var upsertAttemptsSQL = multiRowSQL(upsertAttemptSQL, 9, maxAttemptRows)

// dropStepSQL marks the rows of a step the run's new graph no longer has
// (Transition.DropSteps); never the engine's own rows.
const dropStepSQL = `UPDATE steps SET dropped = 1 WHERE run_id = ?1 AND step = ?2 AND instr(step, '~') = 0`

const consumeSignalSQL = `UPDATE signals SET consumed_by = ?1, consumed_at = ?2
	WHERE id = ?3 AND run_id = ?4 AND consumed_by IS NULL`

// wakeSQL makes a waiting run due now, and marks any unfinished run so that
// a worker holding it cannot park it past the news (see fenceSQL).
const wakeSQL = `UPDATE runs SET
		available_at = CASE WHEN status = 'waiting' THEN MIN(available_at, ?2) ELSE available_at END,
		wake_pending = 1,
		updated_at = ?2
	WHERE id = ?1 AND status IN ('pending', 'running', 'waiting')`

// TransitionCommit applies the transitions in one database transaction,
// with one commit for the batch. A transition whose lease is lost is
// skipped with store.ErrLeaseLost in its result. Any other failure (an
// unknown run, a signal already consumed, a database error) rolls back the
// whole batch and is returned.
func (s *Store) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	results := make([]store.TransitionResult, len(ts))
	err := s.write(ctx, "committing run transitions", func(w *wtx) error {
		for i := range ts {
			res, err := w.transition(&ts[i])
			if err != nil {
				return fmt.Errorf("run %s: %w", ts[i].RunID, err)
			}
			results[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

func (w *wtx) transition(t *store.Transition) (store.TransitionResult, error) {
	res := store.TransitionResult{RunID: t.RunID}
	now := t.Now.UnixMicro()
	n, err := w.execN(fenceFor(t), sqlrow.FenceArgs(t, now)...)
	if err != nil {
		return res, err
	}
	if n == 0 {
		var status, version, hash string
		if err := w.queryRow(`SELECT status, version, graph_hash FROM runs WHERE id = ?1`, t.RunID).Scan(&status, &version, &hash); err != nil {
			return res, fmt.Errorf("transition of an unknown run: %w", store.ErrNotFound)
		}
		res.Err = sqlrow.FenceError(t, status, version, hash)
		return res, nil
	}
	steps := t.Steps
	for len(steps) >= 2 {
		n := min(len(steps), maxStepRows)
		args := make([]any, 1, 1+13*n)
		args[0] = t.RunID
		for _, st := range steps[:n] {
			args = append(args, st.Key, st.Step, st.Index, st.Iteration, string(st.Status), st.Attempts,
				sqlrow.JSONArg(st.Output), sqlrow.JSONArg(st.Error), sqlrow.TimeArg(st.StartedAt), sqlrow.TimeArg(st.FinishedAt), sqlrow.TimeArg(st.WakeAt), sqlrow.TextArg(st.Detail), sqlrow.JSONArg(st.State))
		}
		if _, err := w.exec(upsertStepsSQL.get(n), args...); err != nil {
			return res, fmt.Errorf("writing %d steps: %w", n, err)
		}
		steps = steps[n:]
	}
	for _, st := range steps {
		if _, err := w.exec(upsertStepSQL, t.RunID, st.Key, st.Step, st.Index, st.Iteration, string(st.Status), st.Attempts,
			sqlrow.JSONArg(st.Output), sqlrow.JSONArg(st.Error), sqlrow.TimeArg(st.StartedAt), sqlrow.TimeArg(st.FinishedAt), sqlrow.TimeArg(st.WakeAt), sqlrow.TextArg(st.Detail), sqlrow.JSONArg(st.State)); err != nil {
			return res, fmt.Errorf("writing step %s: %w", st.Key, err)
		}
	}
	for _, name := range t.DropSteps {
		if _, err := w.exec(dropStepSQL, t.RunID, name); err != nil {
			return res, fmt.Errorf("marking step %s dropped: %w", name, err)
		}
	}
	atts := t.Attempts
	for len(atts) >= 2 {
		n := min(len(atts), maxAttemptRows)
		args := make([]any, 1, 1+9*n)
		args[0] = t.RunID
		for _, a := range atts[:n] {
			args = append(args, a.StepKey, a.Attempt, string(a.Status), sqlrow.TextArg(a.Owner),
				sqlrow.TimeArg(a.StartedAt), sqlrow.TimeArg(a.FinishedAt), sqlrow.JSONArg(a.Output), sqlrow.JSONArg(a.Error), sqlrow.TextArg(a.IdempotencyKey))
		}
		if _, err := w.exec(upsertAttemptsSQL.get(n), args...); err != nil {
			return res, fmt.Errorf("writing %d attempts: %w", n, err)
		}
		atts = atts[n:]
	}
	for _, a := range atts {
		if _, err := w.exec(upsertAttemptSQL, t.RunID, a.StepKey, a.Attempt, string(a.Status), sqlrow.TextArg(a.Owner),
			sqlrow.TimeArg(a.StartedAt), sqlrow.TimeArg(a.FinishedAt), sqlrow.JSONArg(a.Output), sqlrow.JSONArg(a.Error), sqlrow.TextArg(a.IdempotencyKey)); err != nil {
			return res, fmt.Errorf("writing attempt %d of step %s: %w", a.Attempt, a.StepKey, err)
		}
	}
	if res.EventIDs, err = w.insertEvents(t.RunID, now, t.Events); err != nil {
		return res, err
	}
	for _, c := range t.Children {
		if c.ParentRunID == "" {
			c.ParentRunID = t.RunID
		}
		if c.Now.IsZero() {
			c.Now = t.Now
		}
		if err := w.insertRun(c); err != nil {
			return res, fmt.Errorf("creating child run %s: %w", c.ID, err)
		}
	}
	for _, r := range t.Runs {
		if r.Now.IsZero() {
			r.Now = t.Now
		}
		if err := w.insertRun(r); err != nil {
			return res, fmt.Errorf("creating run %s: %w", r.ID, err)
		}
	}
	for _, c := range t.ConsumeSignals {
		n, err := w.execN(consumeSignalSQL, c.StepKey, now, c.SignalID, t.RunID)
		if err != nil {
			return res, fmt.Errorf("consuming signal %d: %w", c.SignalID, err)
		}
		if n == 0 {
			return res, fmt.Errorf("signal %d is not a pending signal of the run: %w", c.SignalID, store.ErrConflict)
		}
	}
	for _, id := range t.Wake {
		if _, err := w.exec(wakeSQL, id, now); err != nil {
			return res, fmt.Errorf("waking run %s: %w", id, err)
		}
	}
	for _, id := range t.CancelTrees {
		if err := w.cancelTree(id, now, nil); err != nil {
			return res, fmt.Errorf("canceling run %s: %w", id, err)
		}
	}
	if t.FireSkipped != "" {
		if _, err := w.exec(fireSkippedSQL, t.RunID, t.FireSkipped); err != nil {
			return res, fmt.Errorf("recording the skip of run %s's schedule fire: %w", t.RunID, err)
		}
	}
	if err := w.resilience(t); err != nil {
		return res, err
	}
	if err := w.outputWrites(t.RunID, now, t.Output); err != nil {
		return res, err
	}
	return res, nil
}

// fireSkippedSQL records the schedule fire that started a run as skipped
// (Transition.FireSkipped), through the partial index schedule_fires_run.
// A run no schedule started matches no row. (Postgres: the same with $n.)
const fireSkippedSQL = `UPDATE schedule_fires SET status = 'skipped', reason = ?2 WHERE run_id = ?1`
