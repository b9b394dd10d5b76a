package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/backend"
)

// defaultDSN is the database used when neither --db nor FLOWRUN_DB is set,
// relative to the working directory.
const defaultDSN = backend.DefaultDSN

// defaultBusyTimeout is how long a command waits for another process's
// write to finish before it gives up with exit 5; FLOWRUN_BUSY_TIMEOUT
// sets another.
const defaultBusyTimeout = 5 * time.Second

// busyTimeout is FLOWRUN_BUSY_TIMEOUT (a Go duration, 0 or more) or the
// default.
func (e *env) busyTimeout() (time.Duration, error) {
	v := e.getenv("FLOWRUN_BUSY_TIMEOUT")
	if v == "" {
		return defaultBusyTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usageErrorf("FLOWRUN_BUSY_TIMEOUT=%q is not a duration of 0 or more", v).
			hint("Set FLOWRUN_BUSY_TIMEOUT to a duration like 30s or 2m, or unset it for the default 5s.")
	}
	return d, nil
}

const queryTimeoutUsage = "how long a read of a PostgreSQL database may run before the server stops it (default $FLOWRUN_QUERY_TIMEOUT, else the DSN's statement_timeout, else 5s)"

// readQueryTimeout is --query-timeout when given, else
// FLOWRUN_QUERY_TIMEOUT, else 0 (the DSN's statement_timeout or the
// store's default). Either must be a duration of more than 0: a read
// without a bound is what the timeout is there to prevent.
func (e *env) readQueryTimeout(flagValue time.Duration, given bool) (time.Duration, error) {
	if given {
		if flagValue <= 0 {
			return 0, usageErrorf("--query-timeout must be more than 0, got %s", flagValue).
				hint("Pass a duration such as --query-timeout 30s, or leave it out for the default 5s.")
		}
		return flagValue, nil
	}
	v := e.getenv("FLOWRUN_QUERY_TIMEOUT")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usageErrorf("FLOWRUN_QUERY_TIMEOUT=%q is not a duration of more than 0", v).
			hint("Set FLOWRUN_QUERY_TIMEOUT to a duration like 30s or 2m, or unset it for the default 5s.")
	}
	return d, nil
}

// errNoDatabase is returned by openStore(ctx, false) when the database file
// does not exist, or the PostgreSQL schema holds no flowrun tables: a
// read-only verb has nothing to read, and creating an empty database (or
// flowrun's tables in whatever schema a URL without search_path names)
// just to read it would surprise.
var errNoDatabase = backend.ErrNoDatabase

// noDatabase is the refusal of a verb that reads runs where the database
// does not exist: it says so, names the path it looked at (absolute too)
// and where that came from, and how to point at another. Exit 2: the
// command was pointed at nothing (spec/semantics.md §17). what, when not
// empty, says what was looked for ("no run has an id starting with ...").
func (e *env) noDatabase(what string) *exitError {
	if backend.IsPostgres(e.dsn) {
		msg := e.opened.noTables + " (" + e.storeOrigin() + ")"
		if what != "" {
			msg = what + ": " + msg
		}
		return usageErrorf("%s", msg).
			hint("Check the database and the search_path in the URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE?search_path=SCHEMA names the schema that holds flowrun's tables. flowrun apply FILE.hcl or flowrun worker creates them in a new one. Nothing was created.")
	}
	where := e.dsn
	if abs, err := filepath.Abs(e.dsn); err == nil && abs != e.dsn {
		where += " (" + abs + ")"
	}
	where += ", " + e.storeOrigin()
	msg := "there is no database at " + where
	if what != "" {
		msg = what + ": " + msg
	}
	return usageErrorf("%s", msg).
		hint("Run it in the project you applied from or below it (flowrun looks for .flowrun/ here and in every parent directory), or point at the database with --db PATH or FLOWRUN_DB=PATH (a postgres:// URL for PostgreSQL); flowrun apply FILE.hcl or flowrun init creates one. Nothing was created.")
}

// openStore opens the store named by e.dsn (a postgres:// URL, or a SQLite
// file path) on first use and returns the same
// store afterwards. With create false a missing database file is
// errNoDatabase and nothing is created, and so is a PostgreSQL schema
// without flowrun's tables; with create true the store creates the file
// (0600) and its directory (0700), or the tables. The store refuses, without
// writing to it, a file that is not a flowrun database.
func (e *env) openStore(ctx context.Context, create bool) (store.Store, error) {
	if e.opened.st != nil {
		return e.opened.st, nil
	}
	opts := backend.Options{CreateFile: create, NoCreateTables: !create, QueryTimeout: e.queryTimeout}
	if !backend.IsPostgres(e.dsn) {
		busy, err := e.busyTimeout()
		if err != nil {
			return nil, err
		}
		opts.BusyTimeout = busy
	}
	o, err := backend.Open(ctx, e.dsn, opts)
	switch {
	case errors.Is(err, backend.ErrNoDatabase):
		return nil, errNoDatabase
	case errors.Is(err, backend.ErrNoTables):
		e.opened.noTables = err.Error()
		return nil, errNoDatabase
	case errors.Is(err, backend.ErrBadDSN):
		// A URL that does not parse is the user's mistake, like any
		// other bad flag value: exit 2.
		return nil, &exitError{code: ExitInvalid, err: err, hintText: postgresHint(err)}
	case err != nil && backend.IsPostgres(e.dsn):
		return nil, &exitError{code: ExitStore, err: err, hintText: postgresHint(err)}
	case err != nil:
		return nil, &exitError{code: ExitStore, err: err, hintText: openHint(err)}
	}
	e.opened.st = o.Store
	e.closers = append(e.closers, o.Store.Close)
	return o.Store, nil
}

// checkDSN refuses a database value that looks like a URL flowrun cannot
// use (store.DSNProblem), before anything is opened or created. from says
// where the value came from: "--db", "FLOWRUN_DB" or "project" (env.dsnFrom).
func checkDSN(dsn, from string) error {
	problem := store.DSNProblem(dsn)
	if problem == "" {
		return nil
	}
	shown := store.ShownDSN(dsn) // never the password
	what := fmt.Sprintf("--db %q", shown)
	fix := "Pass --db with"
	switch from {
	case "FLOWRUN_DB":
		what = fmt.Sprintf("FLOWRUN_DB=%q", shown)
		fix = "Set FLOWRUN_DB to"
	case "project", "":
		what = fmt.Sprintf("the project's store %q", shown)
		fix = "Set store in .flowrun/config.hcl to"
	}
	hint := fix + " a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL (or postgresql://) for PostgreSQL, or the path of a SQLite file: a relative path like ./flowrun.db (a name with a colon needs the ./) or an absolute path."
	if from == "FLOWRUN_DB" {
		hint += " Unset FLOWRUN_DB for the default " + defaultDSN + "."
	}
	return usageErrorf("%s %s", what, problem).hint(hint)
}

func postgresHint(err error) string {
	switch {
	case errors.Is(err, backend.ErrBadDSN):
		return "Write the DSN as postgres://USER:PASSWORD@HOST:PORT/DATABASE."
	case errors.Is(err, backend.ErrConnect):
		return "Check that the server is up and that the host, port, user, password and database in the DSN are right."
	case errors.Is(err, backend.ErrNotMigrated):
		return "Upgrade every process together: stop the workers of the older flowrun, then start this version's workers, which migrate the schema; or use a flowrun of the schema's version."
	case errors.Is(err, store.ErrSchemaTooNew), errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrFull), errors.Is(err, store.ErrTimeout):
		return openHint(err)
	}
	// (openHint's last words are about a SQLite file.)
	return "Point --db (or FLOWRUN_DB) at a PostgreSQL database and schema that hold flowrun's tables, or nothing yet: postgres://USER:PASSWORD@HOST:PORT/DATABASE?search_path=SCHEMA."
}

// busyHint says what to do about a database another process held locked
// for longer than the busy timeout.
const busyHint = "Another flowrun process held the database for longer than this command waits; run the command again, or let it wait longer with FLOWRUN_BUSY_TIMEOUT (default 5s)."

// timeoutHint says what to do about a read the database stopped at the
// query timeout.
const timeoutHint = "The database was too busy, or the read too large, to answer within the query timeout; nothing was changed. Run the command again, narrow it (--workflow, --status, --limit), or let it run longer with --query-timeout 30s (or FLOWRUN_QUERY_TIMEOUT)."

// fullHint says what to do about a full disk under the database.
const fullHint = "Free space on that disk and run the command again: everything committed before is kept, and an unfinished run resumes where it stopped (the step whose result could not be written runs again)."

func openHint(err error) string {
	switch {
	case errors.Is(err, store.ErrSchemaTooNew):
		return "This database was written by a newer flowrun; use that version, or pass --db with another database."
	case errors.Is(err, store.ErrBusy):
		return busyHint
	case errors.Is(err, store.ErrTimeout):
		return timeoutHint
	case errors.Is(err, store.ErrFull):
		return fullHint
	}
	return "Pass --db (or set FLOWRUN_DB) with the path of a flowrun database, or of a file to create in a writable directory."
}
