package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// treeCTE is the run $1 and all its descendants, down the parent chain.
// (SQLite: the same WITH RECURSIVE; UNION drops repeats, so a cycle cannot
// loop. Postgres wants both terms in one collation: the ids are COLLATE "C".)
const treeCTE = `WITH RECURSIVE tree (id) AS (
		SELECT $1::text COLLATE "C"
		UNION
		SELECT runs.id FROM runs JOIN tree ON runs.parent_run_id = tree.id
	)`

// RunCancel requests the cancel of a run and its descendants. Each
// unfinished run of the tree is flagged (cancel_requested) and made due
// now. A run of the tree that nobody holds (no lease, or an expired one) is
// ended at once: status canceled with a canceled error, its unfinished steps
// and running attempts canceled, a "canceled" event appended, its lease
// epoch increased (fencing off a holder whose lease expired) and a waiting
// parent outside the tree woken. A leased run is ended by its worker, which
// sees the flag at its next heartbeat. Cancelling a finished run is
// store.ErrConflict.
func (s *Store) RunCancel(ctx context.Context, p store.RunCancelParams) (store.Run, error) {
	var r store.Run
	now := p.Now.UnixMicro()
	err := s.write(ctx, "canceling run "+p.RunID, func(w *wtx) error {
		// The run's row lock, held to the commit, keeps a worker from
		// finishing it between this check and the updates. (SQLite: the
		// whole transaction is the only writer.)
		var status string
		err := w.tx.QueryRow(w.ctx, `SELECT status FROM runs WHERE id = $1 FOR NO KEY UPDATE`, p.RunID).Scan(&status)
		if noRows(err) {
			return fmt.Errorf("run %s: %w", p.RunID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if store.RunStatus(status).Terminal() {
			return fmt.Errorf("run %s already %s; there is nothing to cancel: %w", p.RunID, status, store.ErrConflict)
		}
		if err := w.cancelTree(p.RunID, now, p.Keep); err != nil {
			return err
		}
		r, err = w.runGet(p.RunID)
		return err
	})
	return r, err
}

// cancelTree flags every unfinished run of the tree of runID and ends at
// once those nobody holds (RunCancel; also Transition.CancelTrees), but
// the runs keep names, which a runner ends (RunCancelParams.Keep).
func (w *wtx) cancelTree(runID string, now int64, keep []string) error {
	// (SQLite: MIN(a, b) is LEAST(a, b).)
	if _, err := w.tx.Exec(w.ctx, treeCTE+` UPDATE runs SET
				cancel_requested = true,
				available_at = LEAST(available_at, $2::bigint),
				updated_at = $2::bigint
			WHERE id IN (SELECT id FROM tree) AND status NOT IN ('completed', 'failed', 'canceled')`,
		runID, now); err != nil {
		return err
	}
	rows, err := w.tx.Query(w.ctx, treeCTE+` UPDATE runs SET
				status = 'canceled',
				finished_at = $2::bigint,
				error = $3::text,
				error_text = $6::text,
				wait_reason = NULL,
				lease_owner = NULL,
				lease_expires_at = NULL,
				lease_epoch = lease_epoch + 1
			WHERE id IN (SELECT id FROM tree)
				AND status NOT IN ('completed', 'failed', 'canceled')
				AND (lease_owner IS NULL OR lease_expires_at <= `+leaseNow(4, 2)+`)
				AND NOT (id = ANY($5::text[]))
			RETURNING id`, runID, now, sqlrow.CanceledError, w.callerClock, nonNilIDs(keep), sqlrow.ErrorText([]byte(sqlrow.CanceledError)))
	if err != nil {
		return err
	}
	ended, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var b batch
	for _, id := range ended {
		w.endCanceled(&b, id, now)
	}
	if err := b.send(w); err != nil {
		return err
	}
	// A run made due at once is work: wake idle workers to carry the
	// cancel out.
	w.notify = true
	return nil
}

// endCanceled queues the closing of the steps and attempts of a run just
// ended by a cancel, its event, and the wake of a waiting parent.
func (w *wtx) endCanceled(b *batch, id string, now int64) {
	b.execWrap(func(err error) error { return fmt.Errorf("canceling the steps of run %s: %w", id, err) },
		`UPDATE steps SET status = 'canceled', finished_at = $2, wake_at = NULL
		WHERE run_id = $1 AND status NOT IN ('completed', 'failed', 'skipped', 'canceled')`, id, now)
	b.execWrap(func(err error) error { return fmt.Errorf("canceling the attempts of run %s: %w", id, err) },
		`UPDATE step_attempts SET status = 'canceled', finished_at = $2
		WHERE run_id = $1 AND status = 'running'`, id, now)
	w.appendEvents(id, now, []store.EventWrite{{Kind: "run_canceled", Data: []byte(`{"message":"canceled by request"}`)}}, nil)
	w.releaseSlots(b, id, now)
	// The parent, if it is still unfinished, is told like a child-finished
	// wake (it is usually in the tree and canceled too; then this is a no-op).
	b.execWrap(func(err error) error { return fmt.Errorf("waking the parent of run %s: %w", id, err) },
		`UPDATE runs SET
			available_at = CASE WHEN status = 'waiting' THEN LEAST(available_at, $2::bigint) ELSE available_at END,
			wake_pending = true
		WHERE id = (SELECT parent_run_id FROM runs WHERE id = $1)
			AND status IN ('pending', 'running', 'waiting')`, id, now)
}

// nonNilIDs is ids, an empty array for none: pgx sends a nil slice as
// NULL, and id = ANY(NULL) is NULL, which NOT would not make true.
func nonNilIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
