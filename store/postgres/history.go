package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// StepList returns every step key of a run, in the order the keys were
// first written. (SQLite: rowid order; Postgres: the identity column seq,
// which an upsert of an existing key keeps.)
func (s *Store) StepList(ctx context.Context, runID string) ([]store.Step, error) {
	steps, err := all(ctx, s.pool, sqlrow.ScanStep, `SELECT `+sqlrow.StepCols+` FROM steps WHERE run_id = $1 ORDER BY seq`, runID)
	return steps, s.fail("listing the steps of run "+runID, err)
}

// StepHeads returns every step key of a run without its output, error and
// state (in no particular order).
func (s *Store) StepHeads(ctx context.Context, runID string) ([]store.StepHead, error) {
	heads, err := all(ctx, s.pool, scanStepHead, `SELECT key, status FROM steps WHERE run_id = $1`, runID)
	return heads, s.fail("listing the steps of run "+runID, err)
}

// StepTops returns the step keys of a run other than its foreach items, in
// seq order, a foreach step's output not assembled from its items.
func (s *Store) StepTops(ctx context.Context, runID string) ([]store.Step, error) {
	steps, err := all(ctx, s.pool, sqlrow.ScanStep, `SELECT `+sqlrow.StepTopCols+` FROM steps
		WHERE run_id = $1 AND idx = -1 ORDER BY seq`, runID)
	return steps, s.fail("listing the steps of run "+runID, err)
}

// StepItemTotals counts a run's item rows by step and status.
func (s *Store) StepItemTotals(ctx context.Context, runID string) ([]store.ItemTotal, error) {
	totals, err := all(ctx, s.pool, sqlrow.ScanItemTotal, `SELECT step, status, count(*), COALESCE(sum(attempts), 0) FROM steps
		WHERE run_id = $1 AND idx >= 0 AND iter = -1 GROUP BY step, status`, runID)
	return totals, s.fail("counting the items of run "+runID, err)
}

// StepItems returns a page of one step's item rows by index. The keys of a
// step's items are "step[i]" and their iterations "step[i]#n", so the
// primary key's range from "step[" up to "step\" ('\' follows '[' in the
// key's "C" collation) holds them all and nothing else. A NULL limit is
// none.
func (s *Store) StepItems(ctx context.Context, p store.StepItemsParams) ([]store.Step, error) {
	var limit any
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	steps, err := all(ctx, s.pool, sqlrow.ScanStep, `SELECT `+sqlrow.StepCols+` FROM steps
		WHERE run_id = $1 AND key >= $2::text || '[' AND key < $2::text || '\' AND step = $2::text
			AND idx >= $3 AND iter = -1 AND ($4::text = '' OR status = $4::text)
		ORDER BY idx LIMIT $5::bigint`, p.RunID, p.Step, max(p.From, 0), string(p.Status), limit)
	return steps, s.fail("listing the items of step "+p.Step+" of run "+p.RunID, err)
}

// scanStepHead reads a key and a status; the step, index and iteration
// come from the key (two columns read in about half the time of five).
func scanStepHead(sc sqlrow.Scanner) (store.StepHead, error) {
	var h store.StepHead
	var status string
	if err := sc.Scan(&h.Key, &status); err != nil {
		return h, err
	}
	h.Status = store.StepStatus(status)
	var ok bool
	if h.Step, h.Index, h.Iteration, ok = store.ParseStepKey(h.Key); !ok {
		return h, fmt.Errorf("step key %q is not a step key flowrun writes", h.Key)
	}
	return h, nil
}

// StepGet returns one step key of a run, or store.ErrNotFound.
func (s *Store) StepGet(ctx context.Context, runID, key string) (store.Step, error) {
	st, err := one(ctx, s.pool, sqlrow.ScanStep, `SELECT `+sqlrow.StepCols+` FROM steps WHERE run_id = $1 AND key = $2`, runID, key)
	if noRows(err) {
		return st, fmt.Errorf("step %s of run %s: %w", key, runID, store.ErrNotFound)
	}
	return st, s.fail("reading step "+key+" of run "+runID, err)
}

// AttemptList returns the attempts of a run in the order they were first
// written (of one step key, by attempt number, when stepKey is set).
func (s *Store) AttemptList(ctx context.Context, runID, stepKey string) ([]store.Attempt, error) {
	var as []store.Attempt
	var err error
	if stepKey == "" {
		as, err = all(ctx, s.pool, sqlrow.ScanAttempt, `SELECT `+sqlrow.AttemptCols+` FROM step_attempts WHERE run_id = $1 ORDER BY id`, runID)
	} else {
		as, err = all(ctx, s.pool, sqlrow.ScanAttempt, `SELECT `+sqlrow.AttemptCols+` FROM step_attempts
			WHERE run_id = $1 AND step_key = $2 ORDER BY attempt`, runID, stepKey)
	}
	return as, s.fail("listing the attempts of run "+runID, err)
}

// EventList pages through events in id order, after AfterID.
func (s *Store) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	var limit any // Postgres: LIMIT NULL is no limit (SQLite: a negative LIMIT)
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	var evs []store.Event
	var err error
	if p.RunID == "" {
		evs, err = all(ctx, s.pool, sqlrow.ScanEvent, `SELECT `+sqlrow.EventCols+` FROM events WHERE id > $1 ORDER BY id LIMIT $2::bigint`,
			p.AfterID, limit)
	} else {
		evs, err = all(ctx, s.pool, sqlrow.ScanEvent, `SELECT `+sqlrow.EventCols+` FROM events WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3::bigint`,
			p.RunID, p.AfterID, limit)
	}
	return evs, s.fail("listing events", err)
}

// SignalSend stores a signal for an unfinished run, wakes the run if it is
// waiting (and marks it so a worker holding it cannot park it past the
// signal), appends a signal_received event and wakes idle workers.
// store.ErrNotFound for an unknown run, store.ErrConflict for a finished one.
func (s *Store) SignalSend(ctx context.Context, p store.SignalSendParams) (store.Signal, error) {
	var g store.Signal
	if err := p.Check(); err != nil {
		return g, fmt.Errorf("sending a signal to run %s: %w", p.RunID, err)
	}
	now := p.Now.UnixMicro()
	err := s.write(ctx, fmt.Sprintf("sending signal %s to run %s", p.Name, p.RunID), func(w *wtx) error {
		// The row lock keeps the run from finishing between this check and
		// the insert. (SQLite: the whole transaction is the only writer.)
		var status string
		err := w.tx.QueryRow(w.ctx, `SELECT status FROM runs WHERE id = $1 FOR NO KEY UPDATE`, p.RunID).Scan(&status)
		if noRows(err) {
			return fmt.Errorf("run %s: %w", p.RunID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if store.RunStatus(status).Terminal() {
			return fmt.Errorf("run %s already %s and takes no more signals: %w", p.RunID, status, store.ErrConflict)
		}
		g, err = one(w.ctx, w.tx, sqlrow.ScanSignal, `INSERT INTO signals (run_id, name, payload, created_at) VALUES ($1, $2, $3, $4)
			RETURNING `+sqlrow.SignalCols, p.RunID, p.Name, sqlrow.JSONArg(p.Payload), now)
		if err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, wakeSQL, p.RunID, now); err != nil {
			return err
		}
		data, err := json.Marshal(struct {
			Name     string `json:"name"`
			SignalID int64  `json:"signal_id"`
		}{p.Name, g.ID})
		if err != nil {
			return err
		}
		w.appendEvents(p.RunID, now, []store.EventWrite{{Kind: "signal_received", Data: data}}, nil)
		w.notify = true
		return nil
	})
	return g, err
}

// SignalList returns a run's signals in the order they arrived; only the
// unconsumed ones when pendingOnly.
func (s *Store) SignalList(ctx context.Context, runID string, pendingOnly bool) ([]store.Signal, error) {
	q := `SELECT ` + sqlrow.SignalCols + ` FROM signals WHERE run_id = $1 ORDER BY id`
	if pendingOnly {
		q = `SELECT ` + sqlrow.SignalCols + ` FROM signals WHERE run_id = $1 AND consumed_by IS NULL ORDER BY id`
	}
	gs, err := all(ctx, s.pool, sqlrow.ScanSignal, q, runID)
	return gs, s.fail("listing the signals of run "+runID, err)
}
