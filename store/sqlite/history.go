package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// StepList returns every step key of a run, in the order the keys were
// first written. (SQLite: rowid order; Postgres: a serial column.)
func (s *Store) StepList(ctx context.Context, runID string) ([]store.Step, error) {
	steps, err := readAll(ctx, s, sqlrow.ScanStep, `SELECT `+sqlrow.StepCols+` FROM steps WHERE rowid IN (SELECT rowid FROM steps WHERE run_id = ?1) ORDER BY rowid`, runID)
	return steps, s.fail("listing the steps of run "+runID, err)
}

// StepHeads returns every step key of a run without its output, error and
// state (in no particular order). SQLite joins the keys and statuses into
// one string ("key status,key status,..."; keys and statuses hold neither
// a comma nor a space): one row instead of one per key reads the 10,000
// heads of a long run in about a third of the time.
func (s *Store) StepHeads(ctx context.Context, runID string) ([]store.StepHead, error) {
	var all sql.NullString
	err := s.queryRow(ctx, `SELECT group_concat(key || ' ' || status, ',') FROM steps WHERE run_id = ?1`, runID).Scan(&all)
	if err != nil {
		return nil, s.fail("listing the steps of run "+runID, err)
	}
	if !all.Valid || all.String == "" {
		return nil, nil
	}
	heads := make([]store.StepHead, 0, strings.Count(all.String, ",")+1)
	for item := range strings.SplitSeq(all.String, ",") {
		key, status, ok := strings.Cut(item, " ")
		if !ok {
			return nil, fmt.Errorf("listing the steps of run %s: a step head %q has no status", runID, item)
		}
		h := store.StepHead{Key: key, Status: store.StepStatus(status)}
		if h.Step, h.Index, h.Iteration, ok = store.ParseStepKey(key); !ok {
			return nil, fmt.Errorf("listing the steps of run %s: step key %q is not a step key flowrun writes", runID, key)
		}
		heads = append(heads, h)
	}
	return heads, nil
}

// StepTops returns the step keys of a run other than its foreach items, in
// rowid order, a foreach step's output not assembled from its items.
func (s *Store) StepTops(ctx context.Context, runID string) ([]store.Step, error) {
	steps, err := readAll(ctx, s, sqlrow.ScanStep, `SELECT `+sqlrow.StepTopCols+` FROM steps
		WHERE rowid IN (SELECT rowid FROM steps WHERE run_id = ?1 AND idx = -1) ORDER BY rowid`, runID)
	return steps, s.fail("listing the steps of run "+runID, err)
}

// StepItemTotals counts a run's item rows by step and status. The rows are
// visited through the primary key's run_id prefix and only their step,
// status and attempts columns are read.
func (s *Store) StepItemTotals(ctx context.Context, runID string) ([]store.ItemTotal, error) {
	totals, err := readAll(ctx, s, sqlrow.ScanItemTotal, `SELECT step, status, count(*), sum(attempts) FROM steps
		WHERE run_id = ?1 AND idx >= 0 AND iter = -1 GROUP BY step, status`, runID)
	return totals, s.fail("counting the items of run "+runID, err)
}

// StepItems returns a page of one step's item rows by index. The keys of a
// step's items are "step[i]" and their iterations "step[i]#n", so the
// primary key's range from "step[" up to "step\" ('\' follows '[' in
// SQLite's bytewise BINARY collation) holds them all and nothing else.
func (s *Store) StepItems(ctx context.Context, p store.StepItemsParams) ([]store.Step, error) {
	limit := int64(-1) // SQLite: a negative LIMIT is no limit
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	steps, err := readAll(ctx, s, sqlrow.ScanStep, `SELECT `+sqlrow.StepCols+` FROM steps
		WHERE run_id = ?1 AND key >= ?2 || '[' AND key < ?2 || '\' AND step = ?2
			AND idx >= ?3 AND iter = -1 AND (?4 = '' OR status = ?4)
		ORDER BY idx LIMIT ?5`, p.RunID, p.Step, max(p.From, 0), string(p.Status), limit)
	return steps, s.fail("listing the items of step "+p.Step+" of run "+p.RunID, err)
}

// StepGet returns one step key of a run, or store.ErrNotFound.
func (s *Store) StepGet(ctx context.Context, runID, key string) (store.Step, error) {
	st, err := sqlrow.ScanStep(s.queryRow(ctx, `SELECT `+sqlrow.StepCols+` FROM steps WHERE run_id = ?1 AND key = ?2`, runID, key))
	if errors.Is(err, sql.ErrNoRows) {
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
		// The ids come from the (run_id, ...) index and are sorted in a
		// small ephemeral index: SQLite never sorts whole rows, whose
		// outputs would make its sorter hold the run's whole history.
		as, err = readAll(ctx, s, sqlrow.ScanAttempt, `SELECT `+sqlrow.AttemptCols+` FROM step_attempts
			WHERE id IN (SELECT id FROM step_attempts WHERE run_id = ?1) ORDER BY id`, runID)
	} else {
		as, err = readAll(ctx, s, sqlrow.ScanAttempt, `SELECT `+sqlrow.AttemptCols+` FROM step_attempts
			WHERE run_id = ?1 AND step_key = ?2 ORDER BY attempt`, runID, stepKey)
	}
	return as, s.fail("listing the attempts of run "+runID, err)
}

// EventList pages through events in id order, after AfterID.
func (s *Store) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	limit := int64(-1) // SQLite: a negative LIMIT is no limit
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	var evs []store.Event
	var err error
	if p.RunID == "" {
		evs, err = readAll(ctx, s, sqlrow.ScanEvent, `SELECT `+sqlrow.EventCols+` FROM events WHERE id > ?1 ORDER BY id LIMIT ?2`,
			p.AfterID, limit)
	} else {
		evs, err = readAll(ctx, s, sqlrow.ScanEvent, `SELECT `+sqlrow.EventCols+` FROM events WHERE run_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3`,
			p.RunID, p.AfterID, limit)
	}
	return evs, s.fail("listing events", err)
}

// SignalSend stores a signal for an unfinished run, wakes the run if it is
// waiting (and marks it so a worker holding it cannot park it past the
// signal) and appends a signal_received event. store.ErrNotFound for an
// unknown run, store.ErrConflict for a finished one.
func (s *Store) SignalSend(ctx context.Context, p store.SignalSendParams) (store.Signal, error) {
	var g store.Signal
	if err := p.Check(); err != nil {
		return g, fmt.Errorf("sending a signal to run %s: %w", p.RunID, err)
	}
	now := p.Now.UnixMicro()
	err := s.write(ctx, fmt.Sprintf("sending signal %s to run %s", p.Name, p.RunID), func(w *wtx) error {
		var status string
		err := w.queryRow(`SELECT status FROM runs WHERE id = ?1`, p.RunID).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s: %w", p.RunID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if store.RunStatus(status).Terminal() {
			return fmt.Errorf("run %s already %s and takes no more signals: %w", p.RunID, status, store.ErrConflict)
		}
		g, err = sqlrow.ScanSignal(w.queryRow(`INSERT INTO signals (run_id, name, payload, created_at) VALUES (?1, ?2, ?3, ?4)
			RETURNING `+sqlrow.SignalCols, p.RunID, p.Name, sqlrow.JSONArg(p.Payload), now))
		if err != nil {
			return err
		}
		if _, err := w.exec(wakeSQL, p.RunID, now); err != nil {
			return err
		}
		data, err := json.Marshal(struct {
			Name     string `json:"name"`
			SignalID int64  `json:"signal_id"`
		}{p.Name, g.ID})
		if err != nil {
			return err
		}
		_, err = w.insertEvents(p.RunID, now, []store.EventWrite{{Kind: "signal_received", Data: data}})
		return err
	})
	return g, err
}

// SignalList returns a run's signals in the order they arrived; only the
// unconsumed ones when pendingOnly.
func (s *Store) SignalList(ctx context.Context, runID string, pendingOnly bool) ([]store.Signal, error) {
	q := `SELECT ` + sqlrow.SignalCols + ` FROM signals WHERE run_id = ?1 ORDER BY id`
	if pendingOnly {
		q = `SELECT ` + sqlrow.SignalCols + ` FROM signals WHERE run_id = ?1 AND consumed_by IS NULL ORDER BY id`
	}
	gs, err := readAll(ctx, s, sqlrow.ScanSignal, q, runID)
	return gs, s.fail("listing the signals of run "+runID, err)
}
