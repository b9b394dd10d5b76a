package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// pruneRootsSQL selects the top-level runs whose whole tree may be
// deleted: every run of the tree finished before ?1, no open dead letter,
// no alert still to send. It walks runs_status_created for the three
// terminal statuses (never the unfinished runs) and reads the trees through
// runs_root, dead_letters_run and alert_outbox_run. A negative ?2 is no
// limit. A non-empty ?3 keeps the trees whose top-level run is of that
// workflow.
const pruneRootsSQL = `SELECT r.id FROM runs r
	WHERE r.status IN ('completed', 'failed', 'canceled') AND r.id = r.root_run_id AND r.finished_at < ?1
	AND (?3 = '' OR r.workflow = ?3)
	AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.root_run_id = r.id
		AND (c.status NOT IN ('completed', 'failed', 'canceled') OR c.finished_at IS NULL OR c.finished_at >= ?1))
	AND NOT EXISTS (SELECT 1 FROM runs c JOIN dead_letters d ON d.run_id = c.id
		WHERE c.root_run_id = r.id AND d.status = 'open')
	AND NOT EXISTS (SELECT 1 FROM runs c JOIN alert_outbox a ON a.run_id = c.id
		WHERE c.root_run_id = r.id AND a.status = 'pending')
	LIMIT ?2`

// pruneTreeSQL lists the runs of the selected trees (?1: a JSON array of
// root ids; json_each is SQLite's way to bind a list).
const pruneTreeSQL = `SELECT id FROM runs WHERE root_run_id IN (SELECT value FROM json_each(?1))`

// pruneDeletes empties the tables that hang off runs for the runs of ?1
// (a JSON array of run ids), children first, runs last. Each finds its
// rows through an index that starts with run_id. A run's parent is in the
// same tree, so deleting the runs in one statement satisfies
// runs.parent_run_id's foreign key, which SQLite checks at the end of the
// statement.
var pruneDeletes = []struct {
	table string
	count func(*store.PruneResult) *int
}{
	{"step_attempts", func(r *store.PruneResult) *int { return &r.Attempts }},
	{"steps", func(r *store.PruneResult) *int { return &r.Steps }},
	{"events", func(r *store.PruneResult) *int { return &r.Events }},
	{"signals", nil},
	{"dead_letters", nil},
	{"concurrency_slots", nil},
	{"alert_outbox", nil},
	{"run_inputs", nil},
	{"step_output", func(r *store.PruneResult) *int { return &r.Output }},
	{"webhook_deliveries", nil},
}

const pruneRunsSQL = `DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?1))`

// errDryRun rolls back the transaction of a dry run.
var errDryRun = errors.New("dry run")

// RunPrune deletes finished run trees that ended before p.Before, in one
// write transaction (rolled back for a dry run).
func (s *Store) RunPrune(ctx context.Context, p store.RunPruneParams) (store.PruneResult, error) {
	if p.Before.IsZero() {
		return store.PruneResult{}, errors.New("pruning runs: no cutoff time given")
	}
	var res store.PruneResult
	limit := int64(-1)
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	err := s.write(ctx, "pruning finished runs", func(w *wtx) error {
		roots, err := writeAll(w, sqlrow.ScanString, pruneRootsSQL, p.Before.UnixMicro(), limit, p.Workflow)
		if err != nil {
			return fmt.Errorf("selecting run trees: %w", err)
		}
		if len(roots) == 0 {
			return nil
		}
		rootsJSON, err := json.Marshal(roots)
		if err != nil {
			return err
		}
		ids, err := writeAll(w, sqlrow.ScanString, pruneTreeSQL, string(rootsJSON))
		if err != nil {
			return fmt.Errorf("listing the runs of the trees: %w", err)
		}
		idsJSON, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		for _, d := range pruneDeletes {
			n, err := w.execN(`DELETE FROM `+d.table+` WHERE run_id IN (SELECT value FROM json_each(?1))`, string(idsJSON))
			if err != nil {
				return fmt.Errorf("deleting from %s: %w", d.table, err)
			}
			if d.count != nil {
				*d.count(&res) = int(n)
			}
		}
		n, err := w.execN(pruneRunsSQL, string(idsJSON))
		if err != nil {
			return fmt.Errorf("deleting runs: %w", err)
		}
		res.Runs = int(n)
		if p.DryRun {
			return errDryRun
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	if err != nil {
		return store.PruneResult{}, err
	}
	return res, nil
}
