package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

const insertAlertSQL = `INSERT INTO alert_outbox (run_id, root_run_id, alert, event, step_key, message, status, created_at, next_at)
	VALUES (?1, (SELECT root_run_id FROM runs WHERE id = ?1), ?2, ?3, ?4, ?5, 'pending', ?6, ?6)`

// alertWrites queues a transition's alert deliveries in the outbox.
func (w *wtx) alertWrites(t *store.Transition) error {
	for _, a := range t.Alerts {
		if _, err := w.exec(insertAlertSQL, t.RunID, a.Alert, a.Event, sqlrow.TextArg(a.StepKey), sqlrow.TextArg(a.Message), t.Now.UnixMicro()); err != nil {
			return fmt.Errorf("queueing alert %s: %w", a.Alert, err)
		}
	}
	return nil
}

// claimAlertSQL leases due pending deliveries and counts the attempt, in
// one statement; %s restricts it to a run tree.
const claimAlertSQL = `UPDATE alert_outbox SET owner = ?1, lease_until = ?2, attempts = attempts + 1
	WHERE id IN (SELECT id FROM alert_outbox
		WHERE status = 'pending' AND next_at <= ?3 AND (lease_until IS NULL OR lease_until <= ?3) %s
		ORDER BY next_at, id LIMIT ?4)
	RETURNING ` + sqlrow.AlertCols

// AlertClaim leases due pending deliveries to the owner, oldest first.
func (s *Store) AlertClaim(ctx context.Context, p store.AlertClaimParams) ([]store.AlertDelivery, error) {
	var as []store.AlertDelivery
	err := s.write(ctx, "claiming alerts", func(w *wtx) error {
		var err error
		now, exp, limit := p.Now.UnixMicro(), p.Now.Add(p.LeaseFor).UnixMicro(), max(p.Limit, 1)
		if p.RootRunID == "" {
			as, err = writeAll(w, sqlrow.ScanAlert, fmt.Sprintf(claimAlertSQL, ""), p.Owner, exp, now, limit)
		} else {
			as, err = writeAll(w, sqlrow.ScanAlert, fmt.Sprintf(claimAlertSQL, "AND root_run_id = ?5"), p.Owner, exp, now, limit, p.RootRunID)
		}
		return err
	})
	sort.Slice(as, func(i, j int) bool { return as[i].ID < as[j].ID })
	return as, err
}

// AlertFinish records the end of a delivery attempt, fenced by its owner.
func (s *Store) AlertFinish(ctx context.Context, p store.AlertFinishParams) error {
	return s.write(ctx, fmt.Sprintf("recording alert %d", p.ID), func(w *wtx) error {
		var runID string
		err := w.queryRow(`UPDATE alert_outbox SET status = ?3, last_error = ?4, next_at = COALESCE(?5, next_at),
				sent_at = CASE WHEN ?3 = 'sent' THEN ?6 ELSE sent_at END, owner = NULL, lease_until = NULL
			WHERE id = ?1 AND owner = ?2 AND status = 'pending' RETURNING run_id`,
			p.ID, p.Owner, string(p.Status), sqlrow.TextArg(p.LastError), sqlrow.TimeArg(p.NextAt), p.Now.UnixMicro()).Scan(&runID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("alert %d is no longer held by %s: %w", p.ID, p.Owner, store.ErrLeaseLost)
		}
		if err != nil {
			return err
		}
		_, err = w.insertEvents(runID, p.Now.UnixMicro(), p.Events)
		return err
	})
}

// AlertList returns the deliveries of a run (or of all runs), oldest first.
func (s *Store) AlertList(ctx context.Context, runID string) ([]store.AlertDelivery, error) {
	// Two queries, not (?1 = '' OR run_id = ?1), which reads the whole
	// table: a run's deliveries come from alert_outbox_run.
	if runID == "" {
		as, err := readAll(ctx, s, sqlrow.ScanAlert, `SELECT `+sqlrow.AlertCols+` FROM alert_outbox ORDER BY id`)
		return as, s.fail("listing alerts", err)
	}
	as, err := readAll(ctx, s, sqlrow.ScanAlert, `SELECT `+sqlrow.AlertCols+` FROM alert_outbox WHERE run_id = ?1 ORDER BY id`, runID)
	return as, s.fail("listing alerts", err)
}

// AlertNextDue returns when the next pending delivery can be claimed.
func (s *Store) AlertNextDue(ctx context.Context, rootRunID string) (time.Time, bool, error) {
	var at time.Time
	err := s.queryRow(ctx, `SELECT MIN(CASE WHEN lease_until > next_at THEN lease_until ELSE next_at END)
		FROM alert_outbox WHERE status = 'pending' AND (?1 = '' OR root_run_id = ?1)`, rootRunID).Scan(sqlrow.Time(&at))
	if err != nil {
		return time.Time{}, false, s.fail("finding the next due alert", err)
	}
	return at, !at.IsZero(), nil
}
