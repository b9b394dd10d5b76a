package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// notifyChannel is the LISTEN/NOTIFY channel of flowrun. The payload of
// each notification is the schema whose runs changed.
const notifyChannel = "flowrun_runs"

// WaitForWork blocks until work may be available: it returns nil when a
// commit that made runs claimable (a new run, a wake, a signal, a cancel, a
// released or freed lease that is due) sent a notification, and ctx.Err()
// when ctx ends first. It does not claim anything; the caller claims next,
// and a wake-up may find nothing to claim (another worker was faster).
//
// A worker uses it through an optional interface, so that it also runs on
// stores without notifications:
//
//	type waiter interface{ WaitForWork(context.Context) error }
//	if w, ok := st.(waiter); ok {
//		ctx, cancel := context.WithDeadline(ctx, nextAvailable) // from RunNextAvailable, capped at a poll interval
//		err := w.WaitForWork(ctx)
//		cancel()
//		... // claim again, whatever err was
//	}
//
// Wake-ups are not lost between calls: a notification that arrives while
// nobody waits makes the next call return at once. All callers waiting at
// the same time return on the same notification. The first call only
// starts listening (on a connection of its own, outside the pool) and
// returns nil as soon as it listens, since work may have arrived before; so
// does the first call after the listening connection was lost. The
// connection is opened in the background, at most one attempt at a time:
// a call that ends (its deadline, a cancel) before it is open leaves the
// attempt going for the next call, so callers that wait a few milliseconds
// at a time (a worker while timers are due) still get it open, and never
// dial the server again and again.
//
// Any other error means the listening connection failed (the server went
// away); the caller should fall back to polling until a later call
// succeeds, which reconnects.
func (s *Store) WaitForWork(ctx context.Context) error {
	return s.listener.wait(ctx, s.addr)
}

// listener owns the connection of LISTEN. One caller at a time reads it
// (sem); the others wait for the broadcast (woke) of what that caller
// receives.
type listener struct {
	cfg *pgx.ConnConfig

	// sem is held by the one caller that owns conn and reads from it.
	sem    chan struct{}
	conn   *pgx.Conn // owned by the holder of sem
	schema string    // the payload that concerns this store
	dial   *dial     // the attempt to open conn in progress or not yet taken; owned by the holder of sem
	dials  int       // attempts started, for tests; owned by the holder of sem

	mu      sync.Mutex
	woke    chan struct{} // closed and replaced at each notification
	waiting int           // callers inside wait, for tests
	life    context.Context
	end     context.CancelFunc // ends life: called by close
	closed  bool
	initted bool
}

func (l *listener) init() {
	if !l.initted {
		l.sem = make(chan struct{}, 1)
		l.woke = make(chan struct{})
		l.life, l.end = context.WithCancel(context.Background())
		l.initted = true
	}
}

var errClosed = errors.New("the store is closed")

func (l *listener) wait(ctx context.Context, addr string) error {
	l.mu.Lock()
	l.init()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("waiting for work on %s: %w", addr, errClosed)
	}
	woke, life := l.woke, l.life
	l.waiting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
	}()

	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-woke:
		return nil
	case <-life.Done():
		return fmt.Errorf("waiting for work on %s: %w", addr, errClosed)
	case l.sem <- struct{}{}:
	}
	defer func() { <-l.sem }()
	select {
	case <-woke: // another caller received a notification meanwhile
		return nil
	case <-life.Done():
		return fmt.Errorf("waiting for work on %s: %w", addr, errClosed)
	default:
	}

	// Close ends a wait in progress through this context.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(life, cancel)
	defer stop()

	if l.conn == nil {
		if l.dial == nil {
			l.dial = l.startDial(life)
		}
		select {
		case <-l.dial.done:
		case <-ctx.Done():
			if life.Err() != nil {
				return fmt.Errorf("waiting for work on %s: %w", addr, errClosed)
			}
			return ctx.Err() // the attempt goes on for the next call
		}
		d := l.dial
		l.dial = nil
		if d.err != nil {
			if life.Err() != nil {
				return fmt.Errorf("waiting for work on %s: %w", addr, errClosed)
			}
			return fmt.Errorf("listening for work on %s: %w", addr, d.err)
		}
		l.conn, l.schema = d.conn, d.schema
		return nil
	}
	for {
		n, err := l.conn.WaitForNotification(ctx)
		if err != nil {
			if life.Err() != nil {
				return fmt.Errorf("waiting for work on %s: %w", addr, errClosed)
			}
			if ctx.Err() != nil {
				// A deadline interrupts the read only; the connection
				// stays usable and keeps listening.
				return ctx.Err()
			}
			l.conn.Close(context.WithoutCancel(ctx))
			l.conn = nil
			return fmt.Errorf("listening for work on %s: the connection failed: %w", addr, err)
		}
		if n.Channel != notifyChannel || n.Payload != l.schema {
			continue // another schema's news
		}
		l.mu.Lock()
		close(l.woke)
		l.woke = make(chan struct{})
		l.mu.Unlock()
		return nil
	}
}

// dial is one attempt to open the listening connection, made on a
// goroutine of its own (startDial) and taken by the caller that finds it
// done.
type dial struct {
	done   chan struct{} // closed when the attempt ended; then the fields below are set
	conn   *pgx.Conn
	schema string
	err    error
}

// startDial starts an attempt to open the listening connection. Its
// goroutine belongs to the listener: it ends within twice the connect
// timeout (the connection, then two statements; Open always sets
// cfg.ConnectTimeout) or when life ends, and
// close waits for it. No caller's context bounds it, so a caller that
// stops waiting does not cut it short.
func (l *listener) startDial(life context.Context) *dial {
	l.dials++
	d := &dial{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		ctx, cancel := context.WithTimeout(life, 2*l.cfg.ConnectTimeout)
		defer cancel()
		d.conn, d.schema, d.err = l.open(ctx)
	}()
	return d
}

// open opens a connection that listens on notifyChannel and returns it
// with its schema.
func (l *listener) open(ctx context.Context) (*pgx.Conn, string, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, "", err
	}
	var schema *string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, "", err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+notifyChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, "", err
	}
	if schema == nil {
		return conn, "", nil
	}
	return conn, *schema, nil
}

// close ends any wait in progress and closes the listening connection.
func (l *listener) close() error {
	l.mu.Lock()
	l.init()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.end()
	l.mu.Unlock()
	// Wait for the caller reading the connection, if any, to leave, and
	// for an attempt to open it, which life's end stops.
	l.sem <- struct{}{}
	defer func() { <-l.sem }()
	if d := l.dial; d != nil {
		<-d.done
		l.dial = nil
		if d.conn != nil {
			d.conn.Close(context.Background())
		}
	}
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close(context.Background())
	l.conn = nil
	return err
}

// waiters returns how many callers are inside WaitForWork, each holding the
// broadcast channel of the next notification.
func (l *listener) waiters() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}
