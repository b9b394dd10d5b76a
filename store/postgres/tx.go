package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// maxTries is how often a write transaction is tried when Postgres aborts
// it as a deadlock victim or a serialization failure. Every write function
// computes its statements from its parameters alone, so running it again
// from the start is safe.
const maxTries = 3

// write runs fn in one transaction and commits it; any error rolls
// everything back. Errors are wrapped with op. After fn, the events it
// queued are appended and, when it asked for it, NOTIFY is sent, both in
// the same transaction (see wtx.finish).
func (s *Store) write(ctx context.Context, op string, fn func(w *wtx) error) error {
	return s.retry(ctx, op, func() error { return s.writeOnce(ctx, fn) })
}

// retry runs fn, a whole transaction or a statement that is one, again
// when Postgres aborted it as a deadlock victim or a serialization
// failure, up to maxTries times. Errors are wrapped with op.
func (s *Store) retry(ctx context.Context, op string, fn func() error) error {
	var err error
	for try := 1; try <= maxTries; try++ {
		err = fn()
		if code := pgCode(err); err == nil || (code != codeDeadlock && code != codeSerialization) || ctx.Err() != nil {
			break
		}
	}
	return s.fail(op, callerErr(ctx, err))
}

func (s *Store) writeOnce(ctx context.Context, fn func(w *wtx) error) (err error) {
	tx, err := s.pool.begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// The rollback's own error adds nothing: the transaction is
			// gone either way.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	w := &wtx{ctx: ctx, tx: tx, callerClock: s.opts.CallerClock}
	if err := fn(w); err != nil {
		return err
	}
	if err := w.finish(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// wtx is a write transaction. Events are not inserted when a write asks
// for them but queued and appended together at the end (finish), after
// every row lock the transaction needs is held.
type wtx struct {
	ctx context.Context
	tx  pgx.Tx
	// callerClock is Options.CallerClock: leases on the callers' Now.
	callerClock bool
	events      []queuedEvents
	output      []queuedOutput
	notify      bool
}

// queuedEvents are events of one run waiting for finish; ids receives
// their ids in order.
type queuedEvents struct {
	runID string
	at    int64
	evs   []store.EventWrite
	ids   *[]int64
}

// appendEvents queues events of a run; *ids receives their ids when the
// transaction finishes (ids may be nil).
func (w *wtx) appendEvents(runID string, at int64, evs []store.EventWrite, ids *[]int64) {
	if len(evs) > 0 {
		w.events = append(w.events, queuedEvents{runID, at, evs, ids})
	}
}

// eventsLockSQL makes event ids visible in increasing order. An identity
// column hands out ids in the order of the inserts, but transactions
// commit in another order, so a reader paging by id (logs --follow, the
// TUI) could read id 8, move its cursor past it and never see id 7 that
// commits a moment later. Taking this transaction-scoped lock right before
// the events are inserted, and holding it to the commit, makes id order
// commit order. It is taken last, after every row lock of the transaction,
// so a transaction holding it never waits for another's row and no
// deadlock can form around it. (SQLite: one writer at a time, so ids are
// in commit order already.) The key is derived from the schema, so other
// flowrun schemas of the database do not wait for it.
const eventsLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('flowrun.events:' || current_schema(), 0))`

const insertEventSQL = `INSERT INTO events (run_id, at, kind, step_key, data) VALUES ($1, $2, $3, $4, $5) RETURNING id`

// notifySQL wakes idle workers (WaitForWork) when the transaction commits.
// The payload is the schema, so a listener ignores other schemas' news.
// Postgres folds identical notifications of one transaction into one.
// (SQLite has no notifications; its workers poll.)
const notifySQL = `SELECT pg_notify('` + notifyChannel + `', current_schema())`

// finish appends the queued events and output chunks in one round trip,
// after taking the events lock, and sends the notification.
func (w *wtx) finish() error {
	if len(w.events) == 0 && len(w.output) == 0 && !w.notify {
		return nil
	}
	b := &pgx.Batch{}
	if len(w.events) > 0 || len(w.output) > 0 {
		b.Queue(eventsLockSQL)
		for _, q := range w.events {
			for _, e := range q.evs {
				b.Queue(insertEventSQL, q.runID, q.at, e.Kind, sqlrow.TextArg(e.StepKey), sqlrow.JSONArg(e.Data))
			}
		}
		w.queueOutput(b)
	}
	if w.notify {
		b.Queue(notifySQL)
	}
	br := w.tx.SendBatch(w.ctx, b)
	err := w.readFinish(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

func (w *wtx) readFinish(br pgx.BatchResults) error {
	if len(w.events) > 0 || len(w.output) > 0 {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("locking the event log: %w", err)
		}
		for _, q := range w.events {
			ids := make([]int64, len(q.evs))
			for i, e := range q.evs {
				if err := br.QueryRow().Scan(&ids[i]); err != nil {
					return fmt.Errorf("appending event %s of run %s: %w", e.Kind, q.runID, err)
				}
			}
			if q.ids != nil {
				*q.ids = ids
			}
		}
		if err := w.readOutput(br); err != nil {
			return err
		}
	}
	if w.notify {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("notifying workers: %w", err)
		}
	}
	return nil
}

// batch sends queued statements in one round trip and checks each result
// with its check function (nil: the statement only has to succeed).
type batch struct {
	b      pgx.Batch
	checks []func(pgx.BatchResults) error
}

// exec queues a statement; check, when not nil, judges its command tag.
func (b *batch) exec(check func(rows int64) error, sql string, args ...any) {
	b.b.Queue(sql, args...)
	b.checks = append(b.checks, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		if check != nil {
			return check(tag.RowsAffected())
		}
		return nil
	})
}

// execWrap queues a statement whose error is wrapped by wrap.
func (b *batch) execWrap(wrap func(error) error, sql string, args ...any) {
	b.b.Queue(sql, args...)
	b.checks = append(b.checks, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return wrap(err)
		}
		return nil
	})
}

// send runs the queued statements in the transaction. The first failure is
// returned; Postgres then has aborted the transaction, so the rest of the
// batch did nothing.
func (b *batch) send(w *wtx) error {
	if b.b.Len() == 0 {
		return nil
	}
	br := w.tx.SendBatch(w.ctx, &b.b)
	var err error
	for _, check := range b.checks {
		if err = check(br); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// one reads the single row of a query; pgx.ErrNoRows when there is none.
func one[T any](ctx context.Context, q querier, scan func(sqlrow.Scanner) (T, error), sql string, args ...any) (T, error) {
	return scan(q.QueryRow(ctx, sql, args...))
}

// all reads every row of a query.
func all[T any](ctx context.Context, q querier, scan func(sqlrow.Scanner) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
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

// noRows reports whether err says a query found no row.
func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
