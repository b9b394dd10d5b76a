package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// WorkerBeat upserts the worker's row, live until Now+TTL, and deletes the
// rows of workers gone for longer than store.WorkerGoneAfter. SQLite is
// one host's store, so the caller's clock is the store's.
func (s *Store) WorkerBeat(ctx context.Context, p store.WorkerBeatParams) error {
	i := p.Info
	now := p.Now.UnixMicro()
	return s.write(ctx, fmt.Sprintf("registering worker %s", i.ID), func(w *wtx) error {
		if _, err := w.execN(`INSERT INTO workers (`+sqlrow.WorkerCols+`, expires_at)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
			ON CONFLICT (id) DO UPDATE SET held = excluded.held, last_seen = excluded.last_seen, expires_at = excluded.expires_at`,
			i.ID, i.Host, i.PID, i.Version, i.Concurrency, i.Held, i.StartedAt.UnixMicro(), now, p.Now.Add(p.TTL).UnixMicro()); err != nil {
			return err
		}
		_, err := w.execN(`DELETE FROM workers WHERE expires_at < ?1`, p.Now.Add(-store.WorkerGoneAfter).UnixMicro())
		return err
	})
}

// WorkerGone deletes the worker's row.
func (s *Store) WorkerGone(ctx context.Context, id string) error {
	return s.write(ctx, fmt.Sprintf("unregistering worker %s", id), func(w *wtx) error {
		_, err := w.execN(`DELETE FROM workers WHERE id = ?1`, id)
		return err
	})
}

// WorkerList returns the registered workers, live ones first.
func (s *Store) WorkerList(ctx context.Context, now time.Time) ([]store.WorkerInfo, error) {
	ws, err := readAll(ctx, s, sqlrow.ScanWorker, `SELECT `+sqlrow.WorkerCols+`, expires_at > ?1 AS live
		FROM workers ORDER BY live DESC, host, id`, now.UnixMicro())
	return ws, s.fail("listing workers", err)
}
