package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// write runs fn in one write transaction (BEGIN IMMEDIATE on the single
// writer connection) and commits it; any error rolls everything back.
// Errors are wrapped with op.
func (s *Store) write(ctx context.Context, op string, fn func(w *wtx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	if err := fn(&wtx{s: s, tx: tx, ctx: ctx}); err != nil {
		tx.Rollback()
		return s.fail(op, err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// wtx is a write transaction with the store's prepared statements.
type wtx struct {
	s   *Store
	tx  *sql.Tx
	ctx context.Context
}

// stmt returns the statement for query bound to the transaction. The
// statements of hotStatements were prepared on the writer's one connection
// when the store opened and are reused; any other is prepared in the
// transaction. (Preparing on the writer pool here would wait forever for
// the connection this very transaction holds.)
func (w *wtx) stmt(query string) (*sql.Stmt, error) {
	w.s.mu.Lock()
	st, ok := w.s.stmts[stmtKey{true, query}]
	w.s.mu.Unlock()
	if ok {
		return w.tx.StmtContext(w.ctx, st), nil
	}
	st, err := w.tx.PrepareContext(w.ctx, query)
	if err != nil {
		return nil, fmt.Errorf("preparing %q: %w", firstLine(query), err)
	}
	return st, nil
}

// hotStatements are the write statements prepared once, when the store
// opens: the ones of claims, transitions, run inserts, heartbeats and
// schedule fires (a batch of fires runs each of its statements per fire).
var hotStatements = []string{
	claimAnySQL, claimRunSQL, claimRootSQL, heartbeatSQL,
	fenceSQL, lightFenceSQL, upsertStepSQL, upsertAttemptSQL, consumeSignalSQL, wakeSQL,
	insertRunSQL, insertInputsSQL, insertEventSQL, selectRunSQL, releaseSlotsSQL,
	advanceFireSQL, closeFiresSQL, openFiresSQL, insertFireSQL, lastRunSQL, savepointSQL, releaseSQL,
}

func init() {
	hotStatements = append(hotStatements, insertEventsSQL[2:]...)
	hotStatements = append(hotStatements, upsertStepsSQL[2:]...)
	hotStatements = append(hotStatements, upsertAttemptsSQL[2:]...)
}

// prepareHot prepares hotStatements on the writer.
func (s *Store) prepareHot(ctx context.Context) error {
	for _, q := range hotStatements {
		if _, err := s.stmt(ctx, true, q); err != nil {
			return s.fail("opening the database", err)
		}
	}
	return nil
}

func (w *wtx) exec(query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(w.ctx, args...)
}

// execN runs a statement and returns the number of rows it changed.
func (w *wtx) execN(query string, args ...any) (int64, error) {
	res, err := w.exec(query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (w *wtx) query(query string, args ...any) (*sql.Rows, error) {
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(w.ctx, args...)
}

func (w *wtx) queryRow(query string, args ...any) sqlrow.Scanner {
	st, err := w.stmt(query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(w.ctx, args...)
}

// errRow is a row whose Scan reports the error of preparing its query.
type errRow struct{ err error }

func (e errRow) Scan(...any) error { return e.err }

// query runs a query on the read pool.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, false, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRow runs a one-row query on the read pool.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) sqlrow.Scanner {
	st, err := s.stmt(ctx, false, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// readAll runs a query on the read pool and scans every row.
func readAll[T any](ctx context.Context, s *Store, scan func(sqlrow.Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

// writeAll runs a query in a write transaction and scans every row.
func writeAll[T any](w *wtx, scan func(sqlrow.Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := w.query(query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

// collect reads every row of rows with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(sqlrow.Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
