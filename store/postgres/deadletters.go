package postgres

import (
	"context"
	"fmt"
	"time"

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

// DeadLetterClaim leases an open dead letter to p.Owner for a retry, or
// renews the owner's lease; another owner's live lease refuses it
// (*store.LetterHeldError), a lapsed one is taken over. The lease is
// written and compared on the database's clock, as a run's (leaseclock.go).
func (s *Store) DeadLetterClaim(ctx context.Context, p store.DeadLetterClaimParams) (store.DeadLetter, error) {
	var d store.DeadLetter
	err := s.write(ctx, fmt.Sprintf("claiming dead letter %d", p.ID), func(w *wtx) error {
		var now time.Time
		var err error
		d, now, err = w.openLetter(p.ID, p.Now)
		if err != nil {
			return err
		}
		if err := p.Check(d, now); err != nil {
			return err
		}
		d, err = one(ctx, w.tx, sqlrow.ScanDeadLetter, `UPDATE dead_letters SET claim_owner = $2, claim_until = $3 WHERE id = $1
			RETURNING `+sqlrow.DeadLetterCols, p.ID, p.Owner, now.Add(p.LeaseFor).UnixMicro())
		return err
	})
	return d, err
}

// openLetter locks a dead letter in the write transaction and reads the
// instant leases are measured from (the database's clock, or callerNow
// with Options.CallerClock): ErrNotFound for an unknown id, ErrConflict
// for a closed one.
func (w *wtx) openLetter(id int64, callerNow time.Time) (store.DeadLetter, time.Time, error) {
	var micros int64
	if err := w.tx.QueryRow(w.ctx, `SELECT `+leaseNow21, callerNow.UnixMicro(), w.callerClock).Scan(&micros); err != nil {
		return store.DeadLetter{}, time.Time{}, err
	}
	now := time.UnixMicro(micros)
	d, err := one(w.ctx, w.tx, sqlrow.ScanDeadLetter, `SELECT `+sqlrow.DeadLetterCols+` FROM dead_letters WHERE id = $1 FOR UPDATE`, id)
	if noRows(err) {
		return d, now, fmt.Errorf("dead letter %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return d, now, err
	}
	if d.Status != store.DeadLetterOpen {
		return d, now, fmt.Errorf("dead letter %d is already %s: %w", id, d.Status, store.ErrConflict)
	}
	return d, now, nil
}

// DeadLetterUpdate closes an open dead letter (retried, dropped) or
// records a failed retry of it (open, with the new error), releases its
// claim, and appends the events to its run, in one transaction; the row is
// locked first.
func (s *Store) DeadLetterUpdate(ctx context.Context, p store.DeadLetterUpdateParams) (store.DeadLetter, error) {
	var d store.DeadLetter
	err := s.write(ctx, fmt.Sprintf("updating dead letter %d", p.ID), func(w *wtx) error {
		var leaseAt time.Time
		var err error
		d, leaseAt, err = w.openLetter(p.ID, p.Now)
		if err != nil {
			return err
		}
		if err := store.LetterClaimCheck(d, p.Owner, leaseAt); err != nil {
			return err
		}
		now := p.Now.UnixMicro()
		var closed any
		if p.Status != store.DeadLetterOpen {
			closed = now
		}
		d, err = one(ctx, w.tx, sqlrow.ScanDeadLetter, `UPDATE dead_letters SET status = $2, output = COALESCE($3, output),
				error = COALESCE($4, error), closed_at = $5, claim_owner = NULL, claim_until = NULL WHERE id = $1 RETURNING `+sqlrow.DeadLetterCols,
			p.ID, string(p.Status), sqlrow.JSONArg(p.Output), sqlrow.JSONArg(p.Error), closed)
		if err != nil {
			return err
		}
		w.appendEvents(d.RunID, now, p.Events, nil)
		return nil
	})
	return d, err
}
