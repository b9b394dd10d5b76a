package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// write runs fn in one write transaction (BEGIN IMMEDIATE on the single
// writer connection) and commits it; any error rolls everything back.
// Errors are wrapped with op.
func (s *Store) write(ctx context.Context, op string, fn func(w *wtx) error) error {
	s.promoteHot(ctx)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	w := &wtx{s: s, tx: tx, ctx: ctx}
	defer w.queueHot()
	if err := fn(w); err != nil {
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
	s     *Store
	tx    *sql.Tx
	ctx   context.Context
	local map[string]*sql.Stmt // prepared in this transaction
}

// stmt returns the statement for query bound to the transaction. A hot
// statement (isHot) prepared on the writer is reused. Any other is
// prepared in the transaction, once however often the transaction runs
// it; a hot one is then prepared on the writer before the next write
// transaction begins (promoteHot), so only the hot statements a process
// runs are ever prepared. (Preparing on the writer pool here would wait
// forever for the connection this very transaction holds.)
func (w *wtx) stmt(query string) (*sql.Stmt, error) {
	w.s.mu.Lock()
	st, ok := w.s.stmts[stmtKey{true, query}]
	w.s.mu.Unlock()
	if ok {
		return w.tx.StmtContext(w.ctx, st), nil
	}
	if st, ok := w.local[query]; ok {
		return st, nil
	}
	st, err := w.tx.PrepareContext(w.ctx, query)
	if err != nil {
		return nil, fmt.Errorf("preparing %q: %w", firstLine(query), err)
	}
	if w.local == nil {
		w.local = map[string]*sql.Stmt{}
	}
	w.local[query] = st
	return st, nil
}

// queueHot queues the hot statements the transaction prepared for itself
// to be prepared on the writer (promoteHot); the transaction's own copies
// close with it.
func (w *wtx) queueHot() {
	for q := range w.local {
		if !isHot(q) {
			continue
		}
		w.s.mu.Lock()
		if w.s.promote == nil {
			w.s.promote = map[string]struct{}{}
		}
		w.s.promote[q] = struct{}{}
		w.s.mu.Unlock()
	}
}

// promoteHot prepares on the writer the hot statements that transactions
// queued, while no transaction of this store holds the writer's
// connection. One that fails to prepare stays queued: the transaction that
// runs it next prepares it for itself and reports the error there.
func (s *Store) promoteHot(ctx context.Context) {
	s.mu.Lock()
	queued := s.promote
	s.promote = nil
	s.mu.Unlock()
	for q := range queued {
		if _, err := s.stmt(ctx, true, q); err != nil {
			s.mu.Lock()
			if s.promote == nil {
				s.promote = map[string]struct{}{}
			}
			s.promote[q] = struct{}{}
			s.mu.Unlock()
		}
	}
}

// hotStatements are the write statements kept prepared on the writer once
// a transaction has run them: the ones of claims, transitions, run
// inserts, heartbeats and schedule fires (a batch of fires runs each of
// its statements per fire), and every statement of the multi-row families
// (hotFamilies).
var hotStatements = []string{
	claimAnySQL, claimRunSQL, claimRootSQL, heartbeatSQL,
	fenceSQL, lightFenceSQL, upsertStepSQL, upsertAttemptSQL, consumeSignalSQL, wakeSQL,
	insertRunSQL, insertInputsSQL, insertEventSQL, selectRunSQL, releaseSlotsSQL,
	advanceFireSQL, closeFiresSQL, openFiresSQL, insertFireSQL, lastRunSQL, savepointSQL, releaseSQL,
}

// hotFamilies are the multi-row statements of transitions and run inserts.
var hotFamilies = []*rowsSQL{insertEventsSQL, upsertStepsSQL, upsertAttemptsSQL}

// isHot reports whether q is one of hotStatements or of hotFamilies.
func isHot(q string) bool {
	if slices.Contains(hotStatements, q) {
		return true
	}
	for _, f := range hotFamilies {
		if f.contains(q) {
			return true
		}
	}
	return false
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
