package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// treeCTE is the run ?1 and all its descendants, down the parent chain.
// (Postgres: the same WITH RECURSIVE.)
const treeCTE = `WITH RECURSIVE tree (id) AS (
		SELECT ?1
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
		var status string
		err := w.queryRow(`SELECT status FROM runs WHERE id = ?1`, p.RunID).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
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
		r, err = sqlrow.ScanRun(w.queryRow(selectRunSQL, p.RunID))
		return err
	})
	return r, err
}

// cancelTree flags every unfinished run of the tree of runID and ends at
// once those nobody holds (RunCancel; also Transition.CancelTrees), but
// the runs keep names, which a runner ends (RunCancelParams.Keep).
func (w *wtx) cancelTree(runID string, now int64, keep []string) error {
	if _, err := w.exec(treeCTE+` UPDATE runs SET
				cancel_requested = 1,
				available_at = MIN(available_at, ?2),
				updated_at = ?2
			WHERE id IN (SELECT id FROM tree) AND status NOT IN ('completed', 'failed', 'canceled')`,
		runID, now); err != nil {
		return err
	}
	ended, err := writeAll(w, func(sc sqlrow.Scanner) (string, error) {
		var id string
		return id, sc.Scan(&id)
	}, treeCTE+` UPDATE runs SET
				status = 'canceled',
				finished_at = ?2,
				error = ?3,
				error_text = ?5,
				wait_reason = NULL,
				lease_owner = NULL,
				lease_expires_at = NULL,
				lease_epoch = lease_epoch + 1
			WHERE id IN (SELECT id FROM tree)
				AND status NOT IN ('completed', 'failed', 'canceled')
				AND (lease_owner IS NULL OR lease_expires_at <= ?2)
				AND id NOT IN (SELECT value FROM json_each(?4))
			RETURNING id`, runID, now, sqlrow.CanceledError, keepJSON(keep), sqlrow.ErrorText([]byte(sqlrow.CanceledError)))
	if err != nil {
		return err
	}
	for _, id := range ended {
		if err := w.endCanceled(id, now); err != nil {
			return err
		}
	}
	return nil
}

// endCanceled closes the steps and attempts of a run just ended by a
// cancel, records the event and wakes a waiting parent.
func (w *wtx) endCanceled(id string, now int64) error {
	if _, err := w.exec(`UPDATE steps SET status = 'canceled', finished_at = ?2, wake_at = NULL
		WHERE run_id = ?1 AND status NOT IN ('completed', 'failed', 'skipped', 'canceled')`, id, now); err != nil {
		return fmt.Errorf("canceling the steps of run %s: %w", id, err)
	}
	if _, err := w.exec(`UPDATE step_attempts SET status = 'canceled', finished_at = ?2
		WHERE run_id = ?1 AND status = 'running'`, id, now); err != nil {
		return fmt.Errorf("canceling the attempts of run %s: %w", id, err)
	}
	if _, err := w.insertEvents(id, now, []store.EventWrite{{Kind: "run_canceled", Data: []byte(`{"message":"canceled by request"}`)}}); err != nil {
		return err
	}
	if err := w.releaseSlots(id, now); err != nil {
		return err
	}
	// The parent, if it is still unfinished, is told like a child-finished
	// wake (it is usually in the tree and canceled too; then this is a no-op).
	if _, err := w.exec(`UPDATE runs SET
			available_at = CASE WHEN status = 'waiting' THEN MIN(available_at, ?2) ELSE available_at END,
			wake_pending = 1
		WHERE id = (SELECT parent_run_id FROM runs WHERE id = ?1)
			AND status IN ('pending', 'running', 'waiting')`, id, now); err != nil {
		return fmt.Errorf("waking the parent of run %s: %w", id, err)
	}
	return nil
}

// keepJSON is the JSON array of the runs cancelTree leaves to a runner
// ("[]" for none: json_each of null would yield a NULL, and NOT IN a list
// holding NULL is never true).
func keepJSON(keep []string) string {
	if len(keep) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(keep) // a []string always encodes
	return string(b)
}
