package postgres

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

const insertDeadLetterSQL = `INSERT INTO dead_letters (run_id, step, step_key, idx, item, error, status, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, 'open', $7)`

// deadLetterWrites queues a transition's dead letters in its batch.
func (w *wtx) deadLetterWrites(b *batch, t *store.Transition) {
	for _, d := range t.DeadLetters {
		b.execWrap(func(err error) error { return fmt.Errorf("storing the dead letter of %s: %w", d.StepKey, err) },
			insertDeadLetterSQL, t.RunID, d.Step, d.StepKey, d.Index, sqlrow.JSONArg(d.Item), sqlrow.JSONArg(d.Error), t.Now.UnixMicro())
	}
}

// DeadLetterList lists dead letters oldest first: the open ones, or all.
func (s *Store) DeadLetterList(ctx context.Context, p store.DeadLetterListParams) ([]store.DeadLetter, error) {
	// One query per filter, not ($1 = '' OR run_id = $1), which a generic
	// plan answers by reading the whole table (as in SQLite).
	q := `SELECT ` + sqlrow.DeadLetterCols + ` FROM dead_letters WHERE `
	var args []any
	switch {
	case p.RunID != "" && p.All:
		q, args = q+`run_id = $1`, []any{p.RunID}
	case p.RunID != "":
		q, args = q+`run_id = $1 AND status = 'open'`, []any{p.RunID}
	case p.All:
		q += `true`
	default:
		q += `status = 'open'`
	}
	ds, err := all(ctx, s.pool, sqlrow.ScanDeadLetter, q+` ORDER BY id`, args...)
	return ds, s.fail("listing dead letters", err)
}

// DeadLetterOpenCount counts the open dead letters, on the partial index
// dead_letters_open. (SQLite: the same query.)
func (s *Store) DeadLetterOpenCount(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM dead_letters WHERE status = 'open'`).Scan(&n)
	return n, s.fail("counting the open dead letters", err)
}

// DeadLetterGet returns one dead letter, or store.ErrNotFound.
func (s *Store) DeadLetterGet(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := one(ctx, s.pool, sqlrow.ScanDeadLetter, `SELECT `+sqlrow.DeadLetterCols+` FROM dead_letters WHERE id = $1`, id)
	if noRows(err) {
		return d, fmt.Errorf("dead letter %d: %w", id, store.ErrNotFound)
	}
	return d, s.fail(fmt.Sprintf("reading dead letter %d", id), err)
}

// DeadLetterUpdate closes an open dead letter (retried, dropped) or
// records a failed retry of it (open, with the new error), and appends the
// events to its run, in one transaction; the row is locked first.
func (s *Store) DeadLetterUpdate(ctx context.Context, p store.DeadLetterUpdateParams) (store.DeadLetter, error) {
	var d store.DeadLetter
	err := s.write(ctx, fmt.Sprintf("updating dead letter %d", p.ID), func(w *wtx) error {
		var err error
		d, err = one(ctx, w.tx, sqlrow.ScanDeadLetter, `SELECT `+sqlrow.DeadLetterCols+` FROM dead_letters WHERE id = $1 FOR UPDATE`, p.ID)
		if noRows(err) {
			return fmt.Errorf("dead letter %d: %w", p.ID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if d.Status != store.DeadLetterOpen {
			return fmt.Errorf("dead letter %d is already %s: %w", p.ID, d.Status, store.ErrConflict)
		}
		now := p.Now.UnixMicro()
		var closed any
		if p.Status != store.DeadLetterOpen {
			closed = now
		}
		d, err = one(ctx, w.tx, sqlrow.ScanDeadLetter, `UPDATE dead_letters SET status = $2, output = COALESCE($3, output),
				error = COALESCE($4, error), closed_at = $5 WHERE id = $1 RETURNING `+sqlrow.DeadLetterCols,
			p.ID, string(p.Status), sqlrow.JSONArg(p.Output), sqlrow.JSONArg(p.Error), closed)
		if err != nil {
			return err
		}
		w.appendEvents(d.RunID, now, p.Events, nil)
		return nil
	})
	return d, err
}
