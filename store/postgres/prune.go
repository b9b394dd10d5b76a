package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// pruneRootsSQL selects the top-level runs whose whole tree may be
// deleted: every run of the tree finished before $1, no open dead letter,
// no alert still to send. The roots are locked (FOR UPDATE ... SKIP
// LOCKED), so a redrive (`flowrun retry`) that commits first is seen by the
// re-check of the WHERE clause and one that comes later waits and then
// finds no run; a root another transaction holds is left for the next
// prune. (SQLite: one writer at a time, no locking clause.) A NULL $2 is
// no limit.
const pruneRootsSQL = `SELECT r.id FROM runs r
	WHERE r.status IN ('completed', 'failed', 'canceled') AND r.id = r.root_run_id AND r.finished_at < $1
	AND ($3::text = '' OR r.workflow = $3::text)
	AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.root_run_id = r.id
		AND (c.status NOT IN ('completed', 'failed', 'canceled') OR c.finished_at IS NULL OR c.finished_at >= $1))
	AND NOT EXISTS (SELECT 1 FROM runs c JOIN dead_letters d ON d.run_id = c.id
		WHERE c.root_run_id = r.id AND d.status = 'open')
	AND NOT EXISTS (SELECT 1 FROM runs c JOIN alert_outbox a ON a.run_id = c.id
		WHERE c.root_run_id = r.id AND a.status = 'pending')
	LIMIT $2::bigint
	FOR UPDATE OF r SKIP LOCKED`

// pruneTreeSQL lists the runs of the selected trees. (SQLite binds the
// list as a JSON array read with json_each; Postgres takes a text[].)
const pruneTreeSQL = `SELECT id FROM runs WHERE root_run_id = ANY($1::text[])`

// pruneDeletes empties the tables that hang off runs, children first, runs
// last; each finds its rows through an index that starts with run_id. A
// run's parent is in the same tree, so deleting the runs in one statement
// satisfies runs.parent_run_id's foreign key, checked at the statement's
// end.
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
	{"step_output", func(r *store.PruneResult) *int { return &r.Output }},
	{"webhook_deliveries", nil},
}

const pruneRunsSQL = `DELETE FROM runs WHERE id = ANY($1::text[])`

// errDryRun rolls back the transaction of a dry run.
var errDryRun = errors.New("dry run")

// RunPrune deletes finished run trees that ended before p.Before, in one
// transaction (rolled back for a dry run).
func (s *Store) RunPrune(ctx context.Context, p store.RunPruneParams) (store.PruneResult, error) {
	if p.Before.IsZero() {
		return store.PruneResult{}, errors.New("pruning runs: no cutoff time given")
	}
	var limit any // NULL: no limit
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	var res store.PruneResult
	err := s.write(ctx, "pruning finished runs", func(w *wtx) error {
		res = store.PruneResult{}
		roots, err := all(w.ctx, w.tx, sqlrow.ScanString, pruneRootsSQL, p.Before.UnixMicro(), limit, p.Workflow)
		if err != nil {
			return fmt.Errorf("selecting run trees: %w", err)
		}
		if len(roots) == 0 {
			return nil
		}
		ids, err := all(w.ctx, w.tx, sqlrow.ScanString, pruneTreeSQL, roots)
		if err != nil {
			return fmt.Errorf("listing the runs of the trees: %w", err)
		}
		for _, d := range pruneDeletes {
			tag, err := w.tx.Exec(w.ctx, `DELETE FROM `+d.table+` WHERE run_id = ANY($1::text[])`, ids)
			if err != nil {
				return fmt.Errorf("deleting from %s: %w", d.table, err)
			}
			if d.count != nil {
				*d.count(&res) = int(tag.RowsAffected())
			}
		}
		tag, err := w.tx.Exec(w.ctx, pruneRunsSQL, ids)
		if err != nil {
			return fmt.Errorf("deleting runs: %w", err)
		}
		res.Runs = int(tag.RowsAffected())
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
