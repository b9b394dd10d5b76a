package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

const insertDeadLetterSQL = `INSERT INTO dead_letters (run_id, step, step_key, idx, item, error, status, created_at)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'open', ?7)`

// deadLetterWrites stores a transition's dead letters.
func (w *wtx) deadLetterWrites(t *store.Transition) error {
	for _, d := range t.DeadLetters {
		if _, err := w.exec(insertDeadLetterSQL, t.RunID, d.Step, d.StepKey, d.Index, sqlrow.JSONArg(d.Item), sqlrow.JSONArg(d.Error), t.Now.UnixMicro()); err != nil {
			return fmt.Errorf("storing the dead letter of %s: %w", d.StepKey, err)
		}
	}
	return nil
}

// DeadLetterList lists dead letters oldest first: the open ones, or all.
func (s *Store) DeadLetterList(ctx context.Context, p store.DeadLetterListParams) ([]store.DeadLetter, error) {
	// One query per filter, not (?1 = '' OR run_id = ?1): SQLite cannot
	// use an index for such an OR and would read the whole table. With a
	// run, dead_letters_run; open ones of every run, dead_letters_open.
	q := `SELECT ` + sqlrow.DeadLetterCols + ` FROM dead_letters WHERE `
	var args []any
	switch {
	case p.RunID != "" && p.All:
		q, args = q+`run_id = ?1`, []any{p.RunID}
	case p.RunID != "":
		q, args = q+`run_id = ?1 AND status = 'open'`, []any{p.RunID}
	case p.All:
		q += `1`
	default:
		q += `status = 'open'`
	}
	ds, err := readAll(ctx, s, sqlrow.ScanDeadLetter, q+` ORDER BY id`, args...)
	return ds, s.fail("listing dead letters", err)
}

// DeadLetterOpenCount counts the open dead letters, on the partial index
// dead_letters_open. (Postgres: the same query.)
func (s *Store) DeadLetterOpenCount(ctx context.Context) (int, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM dead_letters WHERE status = 'open'`).Scan(&n)
	return n, s.fail("counting the open dead letters", err)
}

// DeadLetterGet returns one dead letter, or store.ErrNotFound.
func (s *Store) DeadLetterGet(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := sqlrow.ScanDeadLetter(s.queryRow(ctx, `SELECT `+sqlrow.DeadLetterCols+` FROM dead_letters WHERE id = ?1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("dead letter %d: %w", id, store.ErrNotFound)
	}
	return d, s.fail(fmt.Sprintf("reading dead letter %d", id), err)
}

// DeadLetterClaim leases an open dead letter to p.Owner for a retry, or
// renews the owner's lease; another owner's live lease refuses it
// (*store.LetterHeldError), a lapsed one is taken over.
func (s *Store) DeadLetterClaim(ctx context.Context, p store.DeadLetterClaimParams) (store.DeadLetter, error) {
	var d store.DeadLetter
	err := s.write(ctx, fmt.Sprintf("claiming dead letter %d", p.ID), func(w *wtx) error {
		var err error
		if d, err = w.openLetter(p.ID); err != nil {
			return err
		}
		if err := p.Check(d, p.Now); err != nil {
			return err
		}
		d, err = sqlrow.ScanDeadLetter(w.queryRow(`UPDATE dead_letters SET claim_owner = ?2, claim_until = ?3 WHERE id = ?1
			RETURNING `+sqlrow.DeadLetterCols, p.ID, p.Owner, p.Now.Add(p.LeaseFor).UnixMicro()))
		return err
	})
	return d, err
}

// openLetter reads a dead letter in the write transaction: ErrNotFound for
// an unknown id, ErrConflict for a closed one.
func (w *wtx) openLetter(id int64) (store.DeadLetter, error) {
	d, err := sqlrow.ScanDeadLetter(w.queryRow(`SELECT `+sqlrow.DeadLetterCols+` FROM dead_letters WHERE id = ?1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("dead letter %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return d, err
	}
	if d.Status != store.DeadLetterOpen {
		return d, fmt.Errorf("dead letter %d is already %s: %w", id, d.Status, store.ErrConflict)
	}
	return d, nil
}

// DeadLetterUpdate closes an open dead letter (retried, dropped) or
// records a failed retry of it (open, with the new error), releases its
// claim, and appends the events to its run, in one transaction.
func (s *Store) DeadLetterUpdate(ctx context.Context, p store.DeadLetterUpdateParams) (store.DeadLetter, error) {
	var d store.DeadLetter
	err := s.write(ctx, fmt.Sprintf("updating dead letter %d", p.ID), func(w *wtx) error {
		var err error
		if d, err = w.openLetter(p.ID); err != nil {
			return err
		}
		now := p.Now.UnixMicro()
		if err := store.LetterClaimCheck(d, p.Owner, p.Now); err != nil {
			return err
		}
		closed := any(nil)
		if p.Status != store.DeadLetterOpen {
			closed = now
		}
		if _, err := w.exec(`UPDATE dead_letters SET status = ?2, output = COALESCE(?3, output),
				error = COALESCE(?4, error), closed_at = ?5, claim_owner = NULL, claim_until = NULL WHERE id = ?1`,
			p.ID, string(p.Status), sqlrow.JSONArg(p.Output), sqlrow.JSONArg(p.Error), closed); err != nil {
			return err
		}
		if _, err := w.insertEvents(d.RunID, now, p.Events); err != nil {
			return err
		}
		d, err = sqlrow.ScanDeadLetter(w.queryRow(`SELECT `+sqlrow.DeadLetterCols+` FROM dead_letters WHERE id = ?1`, p.ID))
		return err
	})
	return d, err
}
