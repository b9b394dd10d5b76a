package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// The registry is shared by hosts whose clocks may disagree, so a row's
// last_seen and expires_at, and the comparison that says whether it is
// live, all use the database's clock (dbNowMicros, leaseclock.go); the
// caller's Now is not used.

// WorkerBeat upserts the worker's row, live for TTL on the database's
// clock, and deletes the rows of workers gone longer than
// store.WorkerGoneAfter.
func (s *Store) WorkerBeat(ctx context.Context, p store.WorkerBeatParams) error {
	i := p.Info
	return s.write(ctx, fmt.Sprintf("registering worker %s", i.ID), func(w *wtx) error {
		if _, err := w.tx.Exec(ctx, `INSERT INTO workers (`+sqlrow.WorkerCols+`, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, `+dbNowMicros+`, `+dbNowMicros+` + $8)
			ON CONFLICT (id) DO UPDATE SET held = excluded.held, last_seen = excluded.last_seen, expires_at = excluded.expires_at`,
			i.ID, i.Host, i.PID, i.Version, i.Concurrency, i.Held, i.StartedAt.UnixMicro(), p.TTL.Microseconds()); err != nil {
			return err
		}
		_, err := w.tx.Exec(ctx, `DELETE FROM workers WHERE expires_at < `+dbNowMicros+` - $1`, store.WorkerGoneAfter.Microseconds())
		return err
	})
}

// WorkerGone deletes the worker's row.
func (s *Store) WorkerGone(ctx context.Context, id string) error {
	return s.write(ctx, fmt.Sprintf("unregistering worker %s", id), func(w *wtx) error {
		_, err := w.tx.Exec(ctx, `DELETE FROM workers WHERE id = $1`, id)
		return err
	})
}

// WorkerList returns the registered workers, live ones first; live is
// decided on the database's clock (now is not used).
func (s *Store) WorkerList(ctx context.Context, now time.Time) ([]store.WorkerInfo, error) {
	ws, err := all(ctx, s.pool, sqlrow.ScanWorker, `SELECT `+sqlrow.WorkerCols+`, expires_at > `+dbNowMicros+` AS live
		FROM workers ORDER BY live DESC, host, id`)
	return ws, s.fail("listing workers", err)
}
