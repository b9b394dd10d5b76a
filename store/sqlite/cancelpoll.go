package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// RunCancelRequested returns, sorted, those of the runs that have a cancel
// request pending. It is a read of the runs' primary keys, cheap enough for
// a worker to poll for its runs every few hundred milliseconds, so that a
// cancel from another process reaches a running action without waiting for
// the next heartbeat. (Postgres: id = ANY($1).)
func (s *Store) RunCancelRequested(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("reading cancel requests: encoding run ids: %w", err)
	}
	out, err := readAll(ctx, s, func(sc sqlrow.Scanner) (string, error) {
		var id string
		return id, sc.Scan(&id)
	}, `SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?1)) AND cancel_requested = 1 ORDER BY id`, string(list))
	return out, s.fail("reading cancel requests", err)
}
