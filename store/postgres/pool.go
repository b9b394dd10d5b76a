package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/jackc/pgx/v5"
)

// pool is a small connection pool over pgx.Conn: at most max connections,
// idle ones kept for reuse, a connection that is broken or left inside a
// transaction thrown away.
//
// A connection the server dropped while it sat idle (a restart, an idle
// timeout) is found out by the first statement sent on it: BEGIN for a
// write, the query itself for a read. Nothing has happened on the server
// then, so the statement is sent again on a new connection, once, after
// the other idle connections (likely dropped too) are thrown away. This
// needs no clock, unlike pinging connections that were idle for a while.
//
// (pgxpool would do, but it needs github.com/jackc/puddle/v2 listed in
// go.mod, which this module does not list; the store needs no more than
// this.)
type pool struct {
	cfg *pgx.ConnConfig
	sem chan struct{} // one token per connection in use

	mu     sync.Mutex
	idle   []*pgx.Conn
	closed bool
}

var errPoolClosed = errors.New("the connection pool is closed")

func newPool(cfg *pgx.ConnConfig, maxConns int32) *pool {
	if maxConns <= 0 {
		maxConns = int32(max(4, runtime.GOMAXPROCS(0)))
	}
	return &pool{cfg: cfg, sem: make(chan struct{}, maxConns)}
}

// acquire returns a connection for the caller's sole use and whether it was
// reused from the idle ones; release gives it back.
func (p *pool) acquire(ctx context.Context) (c *pgx.Conn, reused bool, err error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.sem
		return nil, false, errPoolClosed
	}
	if n := len(p.idle); n > 0 {
		c = p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()
	c, err = pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.sem
		return nil, false, err
	}
	return c, false, nil
}

// release gives a connection back. A connection that is closed, busy or
// still inside a transaction (an error left it so) is closed instead.
func (p *pool) release(c *pgx.Conn) {
	defer func() { <-p.sem }()
	if c.IsClosed() || c.PgConn().IsBusy() || c.PgConn().TxStatus() != 'I' {
		c.Close(context.Background())
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close(context.Background())
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// stale reports whether the first statement on a reused connection failed
// because the connection was dead, and if so throws the idle connections
// away: the statement may be sent again on a new connection.
func (p *pool) stale(ctx context.Context, c *pgx.Conn, reused bool, err error) bool {
	if err == nil || !reused || !c.IsClosed() || ctx.Err() != nil {
		return false
	}
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, ic := range idle {
		ic.Close(context.Background())
	}
	return true
}

// close closes the idle connections; connections in use are closed when
// released.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.closed = true
	p.mu.Unlock()
	for _, c := range idle {
		c.Close(context.Background())
	}
}

// ping checks that a connection can be had and answers.
func (p *pool) ping(ctx context.Context) error {
	return p.QueryRow(ctx, `SELECT 1`).Scan(new(int))
}

// begin starts a transaction on a connection of its own; committing or
// rolling it back gives the connection back.
func (p *pool) begin(ctx context.Context) (pgx.Tx, error) {
	for try := 0; ; try++ {
		c, reused, err := p.acquire(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := c.BeginTx(ctx, pgx.TxOptions{BeginQuery: beginSQL})
		if err != nil {
			p.release(c)
			if try == 0 && p.stale(ctx, c, reused, err) {
				continue
			}
			return nil, callerErr(ctx, err)
		}
		return &poolTx{Tx: tx, release: func() { p.release(c) }}, nil
	}
}

// Query runs a query on a connection that is given back when the rows are
// closed or read to the end.
func (p *pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	for try := 0; ; try++ {
		c, reused, err := p.acquire(ctx)
		if err != nil {
			return nil, err
		}
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			p.release(c)
			if try == 0 && p.stale(ctx, c, reused, err) {
				continue
			}
			return nil, callerErr(ctx, err)
		}
		return &poolRows{Rows: rows, ctx: ctx, release: func() { p.release(c) }}, nil
	}
}

// QueryRow runs a one-row query; its Scan gives the connection back.
func (p *pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return poolRow{func(dest ...any) error {
		for try := 0; ; try++ {
			c, reused, err := p.acquire(ctx)
			if err != nil {
				return err
			}
			err = c.QueryRow(ctx, sql, args...).Scan(dest...)
			p.release(c)
			if try == 0 && p.stale(ctx, c, reused, err) {
				continue
			}
			return callerErr(ctx, err)
		}
	}}
}

// beginSQL starts a write transaction without the session's
// statement_timeout, which bounds reads only (sessionSettings): one round
// trip, as BEGIN alone.
const beginSQL = `BEGIN; SET LOCAL statement_timeout = 0`

// callerErr makes the error of a statement whose context ended wrap the
// context's error: the server's answer to the cancel request (SQLSTATE
// 57014, as for a statement timeout) is then told apart from a timeout.
func callerErr(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w (%w)", ctx.Err(), err)
}

// poolTx is a transaction whose end gives its connection back.
type poolTx struct {
	pgx.Tx
	once    sync.Once
	release func()
}

func (t *poolTx) Commit(ctx context.Context) error {
	err := t.Tx.Commit(ctx)
	t.once.Do(t.release)
	return err
}

func (t *poolTx) Rollback(ctx context.Context) error {
	err := t.Tx.Rollback(ctx)
	t.once.Do(t.release)
	return err
}

// poolRows gives its connection back once closed or read to the end.
type poolRows struct {
	pgx.Rows
	ctx     context.Context
	once    sync.Once
	release func()
}

func (r *poolRows) Err() error { return callerErr(r.ctx, r.Rows.Err()) }

func (r *poolRows) Close() {
	r.Rows.Close()
	r.once.Do(r.release)
}

func (r *poolRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.once.Do(r.release)
	return false
}

// poolRow runs its query when scanned.
type poolRow struct{ scan func(dest ...any) error }

func (r poolRow) Scan(dest ...any) error { return r.scan(dest...) }
