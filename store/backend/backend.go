// Package backend opens the store that a database value names: a
// postgres:// (or postgresql://) URL, or the path of a SQLite file, bare or
// as sqlite://PATH. It is the one way every binary opens a store, so flowrun
// and flowtui read --db and FLOWRUN_DB alike.
//
// backend must not print, must not choose exit codes and must not read the
// environment: it returns errors the callers word for their users.
package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
	"github.com/flowrun/flowrun/store/sqlite"
)

// DefaultDSN is the database used when neither --db nor FLOWRUN_DB is set,
// relative to the working directory.
const DefaultDSN = ".flowrun/flowrun.db"

var (
	// ErrBadDSN: the value is neither a usable URL nor a file path (see
	// store.DSNProblem), or a Postgres URL that does not parse. It is the
	// user's mistake, never a store fault.
	ErrBadDSN = errors.New("bad database value")
	// ErrNoDatabase: the SQLite file does not exist and Options.CreateFile
	// is false. Nothing was created.
	ErrNoDatabase = errors.New("no database")
	// ErrNotAFile: the SQLite path names a directory.
	ErrNotAFile = errors.New("not a database file")
	// ErrNoTables: the Postgres schema holds no flowrun tables and
	// Options.NoCreateTables is set (postgres.ErrNotInitialized). Nothing
	// was created.
	ErrNoTables = postgres.ErrNotInitialized
	// ErrNotMigrated: the Postgres schema is older than this binary's and
	// Options.NoCreateTables is set (postgres.ErrNotMigrated). Nothing was
	// written.
	ErrNotMigrated = postgres.ErrNotMigrated
	// ErrConnect: the Postgres server cannot be reached or refuses the
	// connection (postgres.ErrConnect), so that a binary words it without
	// importing the driver.
	ErrConnect = postgres.ErrConnect
)

// Options are the settings of Open.
type Options struct {
	// CreateFile creates a missing SQLite file (0600) and its directory
	// (0700). Without it a missing file is ErrNoDatabase.
	CreateFile bool
	// NoCreateTables makes Open refuse a Postgres schema without flowrun's
	// tables instead of creating them (postgres.Options.NoCreate, an error
	// wrapping ErrNoTables), and an older one instead of migrating it
	// (ErrNotMigrated), for a program or a verb that only reads.
	NoCreateTables bool
	// BusyTimeout is how long a SQLite write waits for another process's
	// write (sqlite.Options.BusyTimeout; 0 for its default).
	BusyTimeout time.Duration
	// QueryTimeout bounds a Postgres store's reads
	// (postgres.Options.QueryTimeout; 0 for the DSN's statement_timeout or
	// the default). A SQLite file has no server to stop a read; it is not
	// used there.
	QueryTimeout time.Duration
}

// Opened is an open store and what to call it.
type Opened struct {
	Store store.Store
	// Title names the database for people: the SQLite path, or the
	// Postgres server's host:port/database without credentials.
	Title string
	// Postgres is true for a Postgres store.
	Postgres bool
}

// IsPostgres reports whether dsn names a Postgres database rather than a
// SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// SQLitePath is the file a non-Postgres dsn names.
func SQLitePath(dsn string) string {
	return strings.TrimPrefix(dsn, "sqlite://")
}

// Open opens the store dsn names ("" is DefaultDSN). Errors wrap ErrBadDSN,
// ErrNoDatabase or ErrNotAFile for the caller's mistakes, and the drivers'
// errors (store.ErrBusy, store.ErrSchemaTooNew, postgres.ErrConnect, ...)
// for the store's faults.
func Open(ctx context.Context, dsn string, opts Options) (*Opened, error) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	if problem := store.DSNProblem(dsn); problem != "" {
		return nil, fmt.Errorf("%w: %q %s", ErrBadDSN, dsn, problem)
	}
	if IsPostgres(dsn) {
		pg, err := postgres.Open(ctx, dsn, postgres.Options{NoCreate: opts.NoCreateTables, QueryTimeout: opts.QueryTimeout})
		if errors.Is(err, postgres.ErrBadDSN) {
			return nil, fmt.Errorf("%w: %w", ErrBadDSN, err)
		}
		if err != nil {
			return nil, err
		}
		return &Opened{Store: pg, Title: pg.Addr(), Postgres: true}, nil
	}
	path := SQLitePath(dsn)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !opts.CreateFile {
			return nil, fmt.Errorf("%w at %s", ErrNoDatabase, path)
		}
	case err != nil:
		return nil, fmt.Errorf("cannot read the database %s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("%w: %s is a directory", ErrNotAFile, path)
	case fi.Size() == 0 && !opts.CreateFile && emptyLog(path):
		// An empty file (touched, or truncated) holds no database yet:
		// a verb that only reads must not create one in it.
		return nil, fmt.Errorf("%w at %s (the file is empty)", ErrNoDatabase, path)
	}
	lite, err := sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: opts.BusyTimeout})
	if err != nil {
		return nil, err
	}
	return &Opened{Store: lite, Title: path}, nil
}

// emptyLog reports whether the SQLite file at path has no write-ahead log
// with content: an empty main file then holds nothing at all.
func emptyLog(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err != nil || fi.Size() == 0
}
