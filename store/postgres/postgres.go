// Package postgres is flowrun's store for teams and many hosts: store.Store
// on a PostgreSQL database through pgx v5.
//
// It owns the SQL, the embedded migrations, the mapping of Postgres errors
// to the store's sentinel errors, and the LISTEN/NOTIFY wake-up of idle
// workers. It must not import lang or interp, read the wall clock (every
// time arrives in a params struct) or interpret graphs.
//
// # Schema
//
// The tables and columns are those of store/sqlite, with the same
// encodings: times are BIGINT unix microseconds (a zero time is NULL), JSON
// is TEXT (NULL when empty), optional text is NULL when empty. They live in
// the first schema of the connection's search_path, so a DSN such as
// postgres://host/db?search_path=flowrun gives flowrun a schema of its own
// (the schema must exist).
//
// # Connections
//
// A Store holds a small pool of pgx connections (see pool.go) and, once
// WaitForWork is called, one more connection that LISTENs. A connection the
// server dropped is replaced on its next use. PostgreSQL 11 or newer is
// needed (identity columns, hashtextextended).
//
// # Concurrency
//
// Claims take FOR UPDATE SKIP LOCKED, so many workers on many hosts claim
// disjoint runs without waiting on each other. Every write is one
// transaction at READ COMMITTED; a transaction Postgres aborts as a
// deadlock victim is retried a few times before the error is returned as
// store.ErrBusy. Events are appended at the end of each transaction under a
// transaction-scoped advisory lock, so event ids (cursors for `flowrun logs
// --follow`) become visible in increasing order.
//
// # Wake-ups
//
// A commit that makes work available (a new run, a wake, a signal, a
// released or freed lease that is due) sends NOTIFY on the channel
// flowrun_runs; Store.WaitForWork returns when one arrives.
package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flowrun/flowrun/store"
)

// ErrConnect is wrapped by Open's errors when the server cannot be reached
// or refuses the connection: an unreachable or silent host, wrong
// credentials, a database that does not exist. The CLI maps it, like every
// store error of Open, to exit code 5.
var ErrConnect = errors.New("cannot connect to the Postgres database")

// ErrBadDSN is wrapped by Open's errors when the connection string cannot
// be parsed. The CLI maps it, like every store error of Open, to exit
// code 5.
var ErrBadDSN = errors.New("malformed Postgres connection string")

// ErrNotMigrated is returned by Open with Options.NoCreate when the schema
// is older than this binary's: a program that only reads does not migrate
// a database that many hosts share; nothing was written.
var ErrNotMigrated = errors.New("the schema is not migrated")

// ErrNotInitialized is returned by Open with Options.NoCreate when the
// schema holds no flowrun tables yet; nothing was written. A read-only
// command treats it as "no runs yet" instead of creating the tables.
var ErrNotInitialized = errors.New("no flowrun tables")

// Options tune a Store. The zero value is the safe default.
type Options struct {
	// ConnectTimeout bounds each attempt to connect (and Open's first
	// connection as a whole). Default 5s. A connect_timeout in the DSN
	// takes precedence for each attempt.
	ConnectTimeout time.Duration
	// MaxConns bounds the connection pool. Default max(4, GOMAXPROCS).
	// The listener of WaitForWork uses one more connection of its own.
	MaxConns int32
	// QueryTimeout bounds every read outside a write transaction (a
	// listing, a run's steps, events): the server cancels a statement
	// that runs longer (statement_timeout) and the read fails with
	// store.ErrTimeout. Write transactions are not bounded by it. Zero
	// means the DSN's statement_timeout when it sets one, else
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// NoCreate makes Open refuse, without writing, a schema without
	// flowrun's tables (ErrNotInitialized) and an older schema
	// (ErrNotMigrated), for commands that only read: on a database that
	// workers of many hosts share, the schema changes when a worker or
	// a command that writes of the new version opens it, not when
	// someone lists runs with a newer binary (which would stop the
	// running workers of the older one).
	NoCreate bool
	// CallerClock measures leases on the callers' Now, as SQLite does,
	// instead of the database's clock (leaseclock.go). Only for the store
	// conformance suite, whose times are a fixed epoch: hosts that share a
	// database never agree closely enough on the time for it.
	CallerClock bool
}

// DefaultQueryTimeout is the query timeout when neither Options nor the
// DSN sets one: a person or an API client waits for these reads.
const DefaultQueryTimeout = 5 * time.Second

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 5 * time.Second
	}
	return o
}

// Store is store.Store on a Postgres database. It is safe for concurrent
// use by many goroutines, and by many processes and hosts through the
// database.
type Store struct {
	pool *pool
	addr string // host:port/database, for messages; never the password
	user string // the Postgres user, for messages
	opts Options
	// queryTimeout is the statement_timeout of reads, as set: a
	// duration, or the DSN's value.
	queryTimeout string

	listener listener
}

// Open connects to the Postgres database named by dsn (a postgres:// URL or
// a key=value connection string) and brings its schema up to date.
//
// Open fails within about Options.ConnectTimeout when the server cannot be
// reached, with an error wrapping ErrConnect that names host:port; also for
// wrong credentials or a missing database. A malformed dsn wraps ErrBadDSN.
// Open refuses, without writing anything, a schema that holds tables of
// another program and a database written by a newer flowrun
// (store.ErrSchemaTooNew). Migrations are applied in one transaction under
// an advisory lock, so several processes may open a new database at once.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if strings.TrimSpace(dsn) == "" {
		return nil, fmt.Errorf("no Postgres connection string given; set --db or FLOWRUN_DB to postgres://USER@HOST:PORT/DATABASE: %w", ErrBadDSN)
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the connection string with the password
		// redacted.
		return nil, fmt.Errorf("%v; write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE: %w", err, ErrBadDSN)
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = opts.ConnectTimeout
	}
	queryTimeout, err := sessionSettings(cc, opts.QueryTimeout)
	if err != nil {
		return nil, err
	}
	s := &Store{addr: address(cc), user: cc.User, opts: opts, queryTimeout: queryTimeout, pool: newPool(cc, opts.MaxConns)}
	s.listener.cfg = cc.Copy()
	// The first connection, bounded as a whole: a host that does not
	// answer fails here, in ConnectTimeout, rather than hanging.
	cctx, cancel := context.WithTimeout(ctx, cc.ConnectTimeout+time.Second)
	err = s.pool.ping(cctx)
	cancel()
	if err != nil {
		s.pool.close()
		return nil, s.connectErr(ctx, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.close()
		return nil, err
	}
	return s, nil
}

// sessionSettings sets up every connection of cc for reads that people
// wait for, and returns the query timeout as set:
//
//   - statement_timeout is the session's default, so a read outside a
//     transaction is bounded with no round trip of its own; every write
//     transaction lifts it for itself (beginSQL), so a long migration or
//     prune is not cut. An explicit timeout overrides the DSN's
//     statement_timeout; without one the DSN's is kept, else
//     DefaultQueryTimeout.
//   - client_connection_check_interval (PostgreSQL 14 and newer, on
//     servers that support it) makes the server check, while a statement
//     runs, that the client is still there: the statement of a client that
//     was killed is stopped within the interval, not at its end.
func sessionSettings(cc *pgx.ConnConfig, timeout time.Duration) (string, error) {
	if timeout < 0 {
		return "", fmt.Errorf("query timeout %s is negative; give a duration of more than 0", timeout)
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	set := cc.RuntimeParams["statement_timeout"]
	if set != "" && strings.Trim(set, "0123456789") == "" {
		set += "ms" // Postgres reads a bare number as milliseconds
	}
	switch {
	case timeout > 0:
		set = timeout.String()
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)
	case set == "":
		set = DefaultQueryTimeout.String()
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(DefaultQueryTimeout.Milliseconds(), 10)
	}
	cc.AfterConnect = func(ctx context.Context, c *pgconn.PgConn) error {
		return c.Exec(ctx, clientCheckSQL).Close()
	}
	return set, nil
}

// clientCheckSQL turns on client_connection_check_interval where the
// server has it; an older server, or one on a platform without it, keeps
// running without (the DO block swallows the error).
const clientCheckSQL = `DO $$ BEGIN
	SET client_connection_check_interval = 1000;
EXCEPTION WHEN OTHERS THEN NULL;
END $$`

// QueryTimeout returns the statement_timeout of reads as set: the
// duration given, the DSN's statement_timeout or DefaultQueryTimeout.
func (s *Store) QueryTimeout() string { return s.queryTimeout }

// address renders host:port/database of a connection config.
func address(cc *pgx.ConnConfig) string {
	host := cc.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	} else {
		host = net.JoinHostPort(host, strconv.Itoa(int(cc.Port)))
	}
	return host + "/" + cc.Database
}

// Addr returns the server address and database, host:port/database, for
// messages. It never contains the password.
func (s *Store) Addr() string { return s.addr }

// Close releases the database: the listener of WaitForWork and the pool.
func (s *Store) Close() error {
	err := s.listener.close()
	s.pool.close()
	if err != nil {
		return fmt.Errorf("closing the connection to %s: %w", s.addr, err)
	}
	return nil
}

// SQLSTATE codes the store tells apart.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeDeadlock            = "40P01"
	codeSerialization       = "40001"
	codeLockNotAvailable    = "55P03"
	codeDiskFull            = "53100"
	codeInvalidPassword     = "28P01"
	codeInvalidAuth         = "28000"
	codeInvalidCatalog      = "3D000"
	codeInsufficientPriv    = "42501"
	codeTooManyConnections  = "53300"
	codeCannotConnectNow    = "57P03"
	codeQueryCanceled       = "57014"
)

// pgCode returns the SQLSTATE of err, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// connectErr turns a failure of the first connection into a sentence that
// says what is wrong and how to fix it, wrapping ErrConnect.
func (s *Store) connectErr(ctx context.Context, err error) error {
	var pe *pgconn.PgError
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("connecting to %s: %w", s.addr, ctx.Err())
	case errors.As(err, &pe):
		switch pe.Code {
		case codeInvalidPassword, codeInvalidAuth:
			return fmt.Errorf("the Postgres server at %s refused the user name or password (%s); fix the credentials in --db or FLOWRUN_DB: %w",
				s.addr, pe.Message, ErrConnect)
		case codeInvalidCatalog:
			return fmt.Errorf("the Postgres server at %s has no such database (%s); create it (createdb) or fix the database name in --db or FLOWRUN_DB: %w",
				s.addr, pe.Message, ErrConnect)
		case codeInsufficientPriv:
			return fmt.Errorf("the Postgres user may not connect to %s (%s); grant it CONNECT or use another user: %w",
				s.addr, pe.Message, ErrConnect)
		case codeTooManyConnections, codeCannotConnectNow:
			return fmt.Errorf("the Postgres server at %s does not take connections now (%s); try again later: %w",
				s.addr, pe.Message, ErrConnect)
		}
		return fmt.Errorf("the Postgres server at %s refused the connection (%s): %w", s.addr, pe.Message, ErrConnect)
	case tlsRefused(err):
		return fmt.Errorf("the Postgres server at %s does not accept TLS, which the sslmode of --db or FLOWRUN_DB asks for; turn on ssl on the server, or set sslmode=disable in the URL if the network is trusted: %w",
			s.addr, ErrConnect)
	case tlsUntrusted(err) != "":
		return fmt.Errorf("the Postgres server at %s presented a certificate that does not verify (%s); name its CA with sslrootcert=FILE in --db or FLOWRUN_DB, or connect by a host name the certificate holds: %w",
			s.addr, tlsUntrusted(err), ErrConnect)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("the Postgres server at %s did not answer within %s; check the host and port in --db or FLOWRUN_DB and that the server is up: %w",
			s.addr, s.opts.ConnectTimeout, ErrConnect)
	}
	return fmt.Errorf("cannot reach the Postgres server at %s (%s); check that it is running and that --db or FLOWRUN_DB names the right host and port: %w",
		s.addr, rootCause(err), ErrConnect)
}

// tlsRefused reports whether the server answered the request for TLS
// with a no: it runs without ssl. (pgx words it so and exports no error
// for it.)
func tlsRefused(err error) bool {
	return strings.Contains(err.Error(), "server refused TLS connection")
}

// tlsUntrusted returns why the server's certificate failed the
// verification its sslmode asks for ("x509: certificate signed by unknown
// authority"), or "" when err is no such failure.
func tlsUntrusted(err error) string {
	var ve *tls.CertificateVerificationError
	if errors.As(err, &ve) && ve.Err != nil {
		return ve.Err.Error()
	}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ie x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return ua.Error()
	case errors.As(err, &he):
		return he.Error()
	case errors.As(err, &ie):
		return ie.Error()
	}
	return ""
}

// rootCause is the innermost message of a connection error (say,
// "connect: connection refused"), without pgx's repetition of the address.
func rootCause(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Error()
	}
	return err.Error()
}

// fail wraps an error of operation op with context, mapping a deadlock or a
// lock that could not be had to store.ErrBusy.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller went away or gave up: its own doing, not the store's.
		return fmt.Errorf("%s: %w", op, err)
	}
	switch pgCode(err) {
	case codeQueryCanceled:
		return fmt.Errorf("%s: the database %s did not finish within the query timeout of %s (%v): %w", op, s.addr, s.queryTimeout, err, store.ErrTimeout)
	case codeDeadlock, codeSerialization, codeLockNotAvailable:
		return fmt.Errorf("%s: the database %s stayed locked by other transactions (%v); try again: %w", op, s.addr, err, store.ErrBusy)
	case codeDiskFull:
		return fmt.Errorf("%s: the disk of the database server %s is full (%v): %w", op, s.addr, err, store.ErrFull)
	case codeInsufficientPriv:
		var pe *pgconn.PgError
		errors.As(err, &pe)
		return fmt.Errorf("%s: the Postgres user %s may not do this in %s (%s); use the user that owns flowrun's schema (spec/deploy.md), or grant this one the rights it lacks", op, s.user, s.addr, pe.Message)
	}
	return fmt.Errorf("%s: %w", op, err)
}
