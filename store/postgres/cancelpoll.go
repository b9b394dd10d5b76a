package postgres

import (
	"context"

	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// RunCancelRequested returns, sorted, those of the runs that have a cancel
// request pending: a read of the runs' primary keys that a worker makes
// when a notification arrives (RunCancel notifies) and every few hundred
// milliseconds, so that a cancel from another process reaches a running
// action without waiting for the next heartbeat.
func (s *Store) RunCancelRequested(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := all(ctx, s.pool, func(sc sqlrow.Scanner) (string, error) {
		var id string
		return id, sc.Scan(&id)
	}, `SELECT id FROM runs WHERE id = ANY($1::text[]) AND cancel_requested ORDER BY id`, ids)
	return out, s.fail("reading cancel requests", err)
}
