package postgres

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// fenceSQL is the first statement of every transition: it applies the run
// update only while the caller still holds the lease (owner and epoch; a
// zero lease only while nobody holds it), and holds the run's row lock to
// the commit. No row means the lease is lost and nothing of the transition
// has been written, so a fenced-off transition needs no SAVEPOINT: the next
// transition of the batch goes on in the same transaction. (Any other
// failure fails the whole batch, so there is nothing a savepoint would
// keep either.)
//
// One static statement serves every RunUpdate: a NULL parameter (nil
// pointer) keeps the column, and the flag parameters say whether a nullable
// column is set (to NULL when the new value is zero). available_at is
// pulled forward to now when a signal or a wake arrived since the claim
// (wake_pending) or a cancel is pending, so a worker that parks a run
// without having seen the news does not sleep through it. Parameters are
// cast because Postgres infers no type for a parameter that is only tested
// (IS NULL, CASE WHEN $n). (SQLite: MIN(a, b) is LEAST(a, b); 0/1 flags
// are booleans.)
//
// A transition with Expect also requires the run's status, version and
// graph hash ($21-$23): a compare-and-set. Under READ COMMITTED a second
// decider's UPDATE waits for the first one's row lock and then re-checks
// the WHERE clause on the committed row, so only one of them matches.
//
// RETURNING says whether the run is now free and due: then it is work for
// another worker, and the commit sends a notification.
const fenceSQL = `UPDATE runs SET
		updated_at = $4::bigint,
		status = COALESCE($5::text, status),
		version = COALESCE($6::text, version),
		graph_hash = COALESCE($7::text, graph_hash),
		outputs = COALESCE($8::text, outputs),
		error = COALESCE($9::text, error),
		error_text = CASE WHEN $9::text IS NULL THEN error_text ELSE $24::text END,
		available_at = CASE
			WHEN $10::bigint IS NULL THEN available_at
			WHEN wake_pending OR (cancel_requested AND NOT $17::boolean) THEN LEAST($10::bigint, $4::bigint)
			ELSE $10::bigint END,
		finished_at = CASE WHEN $11::boolean THEN $12::bigint ELSE finished_at END,
		deadline_at = CASE WHEN $13::boolean THEN $14::bigint ELSE deadline_at END,
		attempts_used = COALESCE($15::integer, attempts_used),
		attempt = COALESCE($20::integer, attempt),
		wait_reason = CASE WHEN $16::boolean THEN $18::text ELSE wait_reason END,
		cancel_requested = CASE WHEN $17::boolean THEN false ELSE cancel_requested END,
		lease_owner = CASE WHEN $19::boolean THEN NULL ELSE lease_owner END,
		lease_expires_at = CASE WHEN $19::boolean THEN NULL ELSE lease_expires_at END
	WHERE id = $1
		AND (($2::text = '' AND lease_owner IS NULL) OR (lease_owner = $2::text AND lease_epoch = $3::bigint))
		AND ($21::text IS NULL OR (status = $21::text AND version = $22::text AND graph_hash = $23::text))
	RETURNING lease_owner IS NULL AND status IN ('pending', 'running', 'waiting') AND available_at <= $4::bigint`

// upsertStepSQL writes the whole state of a step key; a zero StartedAt keeps
// the stored one (the first start of the step). (SQLite: the same upsert.)
const upsertStepSQL = `INSERT INTO steps (run_id, key, step, idx, iter, status, attempts, output, error,
		started_at, finished_at, wake_at, detail, state)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
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

// upsertAttemptSQL inserts an attempt or updates it: the status always,
// every other field only when the write sets it (zero keeps the stored
// value), so closing an attempt need not repeat its owner and start.
const upsertAttemptSQL = `INSERT INTO step_attempts (run_id, step_key, attempt, status, owner,
		started_at, finished_at, output, error, idempotency_key)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
	ON CONFLICT (run_id, step_key, attempt) DO UPDATE SET
		status = excluded.status,
		owner = COALESCE(excluded.owner, step_attempts.owner),
		started_at = COALESCE(excluded.started_at, step_attempts.started_at),
		finished_at = COALESCE(excluded.finished_at, step_attempts.finished_at),
		output = COALESCE(excluded.output, step_attempts.output),
		error = COALESCE(excluded.error, step_attempts.error),
		idempotency_key = COALESCE(excluded.idempotency_key, step_attempts.idempotency_key)`

const consumeSignalSQL = `UPDATE signals SET consumed_by = $1, consumed_at = $2
	WHERE id = $3 AND run_id = $4 AND consumed_by IS NULL`

// wakeSQL makes a waiting run due now, and marks any unfinished run so that
// a worker holding it cannot park it past the news (see fenceSQL).
// (SQLite: MIN(a, b) is LEAST(a, b).)
const wakeSQL = `UPDATE runs SET
		available_at = CASE WHEN status = 'waiting' THEN LEAST(available_at, $2::bigint) ELSE available_at END,
		wake_pending = true,
		updated_at = $2::bigint
	WHERE id = $1 AND status IN ('pending', 'running', 'waiting')`

// TransitionCommit applies the transitions in one transaction, with one
// commit for the batch. A transition whose lease is lost is skipped with
// store.ErrLeaseLost in its result. Any other failure (an unknown run, a
// signal already consumed, a database error) rolls back the whole batch and
// is returned.
//
// Round trips: BEGIN; per transition, the fence and then one pipelined
// batch of its step, attempt, child, signal and wake writes; one batch
// appending every event of the transaction (and NOTIFY); COMMIT.
func (s *Store) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	var results []store.TransitionResult
	err := s.write(ctx, "committing run transitions", func(w *wtx) error {
		results = make([]store.TransitionResult, len(ts))
		for i := range ts {
			if err := w.transition(&ts[i], &results[i]); err != nil {
				return fmt.Errorf("run %s: %w", ts[i].RunID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

func (w *wtx) transition(t *store.Transition, res *store.TransitionResult) error {
	*res = store.TransitionResult{RunID: t.RunID}
	now := t.Now.UnixMicro()
	var due bool
	err := w.tx.QueryRow(w.ctx, fenceSQL, sqlrow.FenceArgs(t, now)...).Scan(&due)
	if noRows(err) {
		var status, version, hash string
		if err := w.tx.QueryRow(w.ctx, `SELECT status, version, graph_hash FROM runs WHERE id = $1`, t.RunID).Scan(&status, &version, &hash); noRows(err) {
			return fmt.Errorf("transition of an unknown run: %w", store.ErrNotFound)
		} else if err != nil {
			return err
		}
		res.Err = sqlrow.FenceError(t, status, version, hash)
		return nil
	}
	if err != nil {
		return err
	}
	if due {
		w.notify = true
	}
	var b batch
	for _, st := range t.Steps {
		b.execWrap(func(err error) error { return fmt.Errorf("writing step %s: %w", st.Key, err) },
			upsertStepSQL, t.RunID, st.Key, st.Step, st.Index, st.Iteration, string(st.Status), st.Attempts,
			sqlrow.JSONArg(st.Output), sqlrow.JSONArg(st.Error), sqlrow.TimeArg(st.StartedAt), sqlrow.TimeArg(st.FinishedAt), sqlrow.TimeArg(st.WakeAt), sqlrow.TextArg(st.Detail), sqlrow.JSONArg(st.State))
	}
	for _, name := range t.DropSteps {
		b.execWrap(func(err error) error { return fmt.Errorf("marking step %s dropped: %w", name, err) },
			dropStepSQL, t.RunID, name)
	}
	for _, a := range t.Attempts {
		b.execWrap(func(err error) error {
			return fmt.Errorf("writing attempt %d of step %s: %w", a.Attempt, a.StepKey, err)
		},
			upsertAttemptSQL, t.RunID, a.StepKey, a.Attempt, string(a.Status), sqlrow.TextArg(a.Owner),
			sqlrow.TimeArg(a.StartedAt), sqlrow.TimeArg(a.FinishedAt), sqlrow.JSONArg(a.Output), sqlrow.JSONArg(a.Error), sqlrow.TextArg(a.IdempotencyKey))
	}
	// The transition's own events come before its children's, as on SQLite.
	w.appendEvents(t.RunID, now, t.Events, &res.EventIDs)
	for _, c := range t.Children {
		if c.ParentRunID == "" {
			c.ParentRunID = t.RunID
		}
		if c.Now.IsZero() {
			c.Now = t.Now
		}
		if err := w.insertRun(&b, c); err != nil {
			return fmt.Errorf("creating child run %s: %w", c.ID, err)
		}
	}
	for _, r := range t.Runs {
		if r.Now.IsZero() {
			r.Now = t.Now
		}
		if err := w.insertRun(&b, r); err != nil {
			return fmt.Errorf("creating run %s: %w", r.ID, err)
		}
	}
	for _, c := range t.ConsumeSignals {
		b.exec(func(n int64) error {
			if n == 0 {
				return fmt.Errorf("signal %d is not a pending signal of the run: %w", c.SignalID, store.ErrConflict)
			}
			return nil
		}, consumeSignalSQL, c.StepKey, now, c.SignalID, t.RunID)
	}
	for _, id := range t.Wake {
		b.execWrap(func(err error) error { return fmt.Errorf("waking run %s: %w", id, err) }, wakeSQL, id, now)
		w.notify = true
	}
	if err := b.send(w); err != nil {
		return err
	}
	for _, id := range t.CancelTrees {
		if err := w.cancelTree(id, now, nil); err != nil {
			return fmt.Errorf("canceling run %s: %w", id, err)
		}
	}
	if t.FireSkipped != "" {
		if _, err := w.tx.Exec(w.ctx, fireSkippedSQL, t.RunID, t.FireSkipped); err != nil {
			return fmt.Errorf("recording the skip of run %s's schedule fire: %w", t.RunID, err)
		}
	}
	w.appendOutput(t.RunID, now, t.Output)
	return w.resilience(t)
}

// dropStepSQL marks the rows of a step the run's new graph no longer has
// (Transition.DropSteps); never the engine's own rows. (SQLite: the same
// with instr.)
const dropStepSQL = `UPDATE steps SET dropped = true WHERE run_id = $1 AND step = $2 AND strpos(step, '~') = 0`

// fireSkippedSQL records the schedule fire that started a run as skipped
// (Transition.FireSkipped), through the partial index schedule_fires_run.
// A run no schedule started matches no row. (SQLite: the same with ?n.)
const fireSkippedSQL = `UPDATE schedule_fires SET status = 'skipped', reason = $2 WHERE run_id = $1`
