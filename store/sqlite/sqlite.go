// Package sqlite is flowrun's embedded store: store.Store on one SQLite file
// (modernc.org/sqlite, no cgo), the default that needs no set-up.
//
// It owns the SQL, the embedded migrations and the mapping of SQLite errors
// to the store's sentinel errors. It must not import lang or interp, read
// the wall clock (every time arrives in a params struct) or interpret graphs.
//
// # Connections
//
// A Store holds two database/sql pools on the same file:
//
//   - the writer, one connection (SetMaxOpenConns(1)) whose transactions
//     begin with BEGIN IMMEDIATE (DSN _txlock=immediate). SQLite admits one
//     writer at a time anyway; a single connection makes the goroutines of
//     this process queue in database/sql (no busy spinning, no SQLITE_BUSY
//     between our own goroutines) and lets every write statement stay
//     prepared on that connection for the life of the store. Other
//     processes are kept out by the file lock BEGIN IMMEDIATE takes at the
//     start of the transaction, so a write never fails half-way on a lock.
//   - the readers, a small pool in WAL mode with query_only, so listings,
//     the TUI and `flowrun logs` never wait for the writer and never write.
//
// # Busy
//
// In WAL mode the only statement of ours that waits on another process is
// BEGIN IMMEDIATE. SQLite's busy handler already retries it with backoff for
// Options.BusyTimeout, so the store does not retry again on top: when the
// timeout passes the error is returned as store.ErrBusy, naming the file.
//
// # Snapshots
//
// Beyond store.Store, a Store can copy its database to a file and put such
// a copy back (Snapshot, Restore), and digest the state the engine decides
// from, less the event history and the columns that name the process
// holding a lease (Digest). flowrun test starts crash replays from them;
// the columns left out are named in snapshot.go, beside the schema that
// adds them.
//
// # Time and JSON
//
// Times are INTEGER unix microseconds in UTC; a zero time.Time is NULL.
// JSON is TEXT; an empty json.RawMessage is NULL. Optional text is NULL
// when empty.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/flowrun/flowrun/store"
)

// Options tune a Store. The zero value is the safe default.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "FULL" (the default: a
	// commit survives a power loss) or "NORMAL" (a commit survives a crash
	// of the process but maybe not of the machine; faster).
	Synchronous string
	// BusyTimeout is how long a write waits for another process's write
	// lock before failing with store.ErrBusy. Default 5s.
	BusyTimeout time.Duration
	// MaxReaders bounds the read pool. Default max(4, GOMAXPROCS).
	MaxReaders int
}

func (o Options) withDefaults() (Options, error) {
	switch strings.ToUpper(o.Synchronous) {
	case "":
		o.Synchronous = "FULL"
	case "FULL", "NORMAL":
		o.Synchronous = strings.ToUpper(o.Synchronous)
	default:
		return o, fmt.Errorf("synchronous mode %q is not supported; use FULL or NORMAL", o.Synchronous)
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.MaxReaders <= 0 {
		o.MaxReaders = max(4, runtime.GOMAXPROCS(0))
	}
	return o, nil
}

// Store is store.Store on a SQLite file. It is safe for concurrent use by
// many goroutines, and by many processes through the file.
type Store struct {
	path string
	opts Options
	w    *sql.DB // the writer: one connection, BEGIN IMMEDIATE
	r    *sql.DB // the readers: query_only

	mu      sync.Mutex
	stmts   map[stmtKey]*sql.Stmt
	promote map[string]struct{} // hot statements to prepare on the writer (promoteHot)

	// The log watcher of WaitForWork (notify.go), started on first use.
	wmu      sync.Mutex
	watcher  *logWatcher
	watchErr error
	wclosed  bool
}

type stmtKey struct {
	write bool
	query string
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Open opens (creating if needed) the flowrun database at path and brings
// its schema up to date. A new file is created 0600 in a directory created
// 0700. Open refuses, without writing to it, a file that is not a SQLite
// database, a SQLite database that flowrun did not create, and a database
// written by a newer flowrun (store.ErrSchemaTooNew).
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("no database path given; set --db or FLOWRUN_DB")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the database path %s: %w", path, err)
	}
	cleanup, err := prepareFile(abs)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, abs, opts)
	if err != nil {
		cleanup()
		return nil, err
	}
	return s, nil
}

// readerCacheKiB is each read connection's page cache (PRAGMA cache_size,
// negative: KiB).
const readerCacheKiB = -512

// writerCacheKiB is the writer's page cache (PRAGMA cache_size, negative:
// KiB). A commit walks the interior pages of a few B-trees (the run, its
// step and event rows and their indices) and the last leaf of each: a
// small cache holds those, and a page it drops comes back from the OS
// page cache. SQLite's default (2,000 KiB) held the leaves a long run had
// written and would not write again, in every worker for as long as it
// lived.
const writerCacheKiB = -512

func open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := probe(ctx, path, opts); err != nil {
		return nil, err
	}
	busy := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	w, err := sql.Open("sqlite", dsn(path, "rw", "immediate",
		"busy_timeout("+busy+")", "journal_mode(WAL)", "synchronous("+opts.Synchronous+")", "foreign_keys(1)",
		"cache_size("+strconv.Itoa(writerCacheKiB)+")"))
	if err != nil {
		return nil, fmt.Errorf("cannot open the database %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{path: path, opts: opts, w: w, stmts: map[stmtKey]*sql.Stmt{}}
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, s.openErr(err)
	}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	// SQLite gives the -wal and -shm files the mode of the database file;
	// make sure of it for files an older or foreign writer left behind.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := tighten(path + suffix); err != nil {
			w.Close()
			return nil, err
		}
	}
	// Each reader keeps a page cache of its own (SQLite's default is 2 MiB
	// a connection); a worker's reads are index lookups and one-pass scans
	// (a run's steps, a stored graph's overflow pages) that the OS page
	// cache serves as well, so four full caches were ~8 MiB of a worker's
	// resident memory for little. The writer's is small too
	// (writerCacheKiB).
	r, err := sql.Open("sqlite", dsn(path, "rw", "deferred",
		"busy_timeout("+busy+")", "query_only(1)", "cache_size("+strconv.Itoa(readerCacheKiB)+")"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("cannot open the database %s: %w", path, err)
	}
	r.SetMaxOpenConns(opts.MaxReaders)
	r.SetMaxIdleConns(opts.MaxReaders)
	r.SetConnMaxIdleTime(0)
	s.r = r
	return s, nil
}

// dsn builds a modernc DSN. The "file:" form makes SQLite honour mode=rw
// (never create the file: prepareFile did, with the right mode), mode=ro
// and immutable=1; mode "immutable" is mode=ro&immutable=1.
func dsn(path, mode, txlock string, pragmas ...string) string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(path)}
	q := url.Values{}
	if mode == "immutable" {
		mode = "ro"
		q.Set("immutable", "1")
	}
	q.Set("mode", mode)
	q.Set("_txlock", txlock)
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	// _pragma values are constants of this package, never user input.
	return u.String() + "?" + q.Encode()
}

// prepareFile makes sure path is a regular file that may hold a SQLite
// database, creating the directory (0700) and an empty file (0600) when
// they are missing. The returned cleanup removes what it created.
func prepareFile(path string) (cleanup func(), err error) {
	cleanup = func() {}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return cleanup, fmt.Errorf("%s is a directory, not a database file; point --db or FLOWRUN_DB at a file", path)
		}
		if !fi.Mode().IsRegular() {
			return cleanup, fmt.Errorf("%s is not a regular file and cannot hold a flowrun database", path)
		}
		return cleanup, checkMagic(path)
	}
	// Missing (or unreachable: creating it says why, precisely).
	dir := filepath.Dir(path)
	created := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		removeDirs(created)
		return cleanup, fmt.Errorf("cannot create the directory %s for the database: %w; choose another location with --db or FLOWRUN_DB", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		removeDirs(created)
		return cleanup, fmt.Errorf("cannot create the database file %s: %w; choose a writable location with --db or FLOWRUN_DB", path, err)
	}
	if err := f.Close(); err != nil {
		return cleanup, fmt.Errorf("cannot create the database file %s: %w", path, err)
	}
	return func() {
		for _, p := range []string{path + "-wal", path + "-shm", path} {
			os.Remove(p)
		}
		removeDirs(created)
	}, nil
}

// missingDirs lists dir and its ancestors that do not exist, deepest first.
func missingDirs(dir string) []string {
	var out []string
	for {
		if _, err := os.Stat(dir); err == nil || !errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = append(out, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// removeDirs removes directories Open created, deepest first; a directory
// that is not empty stays.
func removeDirs(dirs []string) {
	for _, d := range dirs {
		os.Remove(d)
	}
}

// checkMagic refuses a non-empty file that does not start like a SQLite
// database, before SQLite touches it.
func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read the database file %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if n == 0 && errors.Is(err, io.EOF) {
		return nil // empty: a new database
	}
	if string(head[:n]) != sqliteMagic {
		return notDatabase(path)
	}
	return nil
}

func notDatabase(path string) error {
	return fmt.Errorf("%s is not a flowrun database: file is not a database; point --db or FLOWRUN_DB at a flowrun database or a new file", path)
}

// tighten makes an existing file private to its owner.
func tighten(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot check the mode of %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("cannot make %s private (chmod 0600): %w", path, err)
	}
	return nil
}

// Close releases the database.
func (s *Store) Close() error {
	s.closeWatch()
	s.mu.Lock()
	for k, st := range s.stmts {
		st.Close()
		delete(s.stmts, k)
	}
	s.mu.Unlock()
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("closing the database %s: %w", s.path, err)
	}
	return nil
}

// stmt returns a prepared statement of the writer (write) or the readers,
// preparing it on first use. It prepares without holding s.mu: a write
// transaction holding the writer's connection takes s.mu to find its
// statements.
func (s *Store) stmt(ctx context.Context, write bool, query string) (*sql.Stmt, error) {
	k := stmtKey{write, query}
	s.mu.Lock()
	st, ok := s.stmts[k]
	s.mu.Unlock()
	if ok {
		return st, nil
	}
	db := s.r
	if write {
		db = s.w
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("preparing %q: %w", firstLine(query), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if had, ok := s.stmts[k]; ok {
		st.Close() // another goroutine prepared it meanwhile
		return had, nil
	}
	s.stmts[k] = st
	return st, nil
}

func firstLine(q string) string {
	q = strings.TrimSpace(q)
	if i := strings.IndexByte(q, '\n'); i >= 0 {
		return q[:i] + " ..."
	}
	return q
}

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// fail wraps an error of operation op with context, mapping a lock held
// past the busy timeout to store.ErrBusy and a damaged file to a clear
// message.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	switch c := sqliteCode(err); {
	case isBusy(err):
		return fmt.Errorf("%s: the database %s stayed locked by another process for more than %s (%v); try again, or raise the busy timeout: %w",
			op, s.path, s.opts.BusyTimeout, err, store.ErrBusy)
	case c == sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%s: %w", op, notDatabase(s.path))
	case c == sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%s: the database %s is damaged (%v); restore it from a backup", op, s.path, err)
	case c == sqlite3.SQLITE_READONLY || c == sqlite3.SQLITE_CANTOPEN || c == sqlite3.SQLITE_PERM:
		return fmt.Errorf("%s: cannot write the database %s or its -wal/-shm files next to it (%v); make the file and its directory writable", op, s.path, err)
	case c == sqlite3.SQLITE_FULL:
		return fmt.Errorf("%s: the disk holding %s is full (%v): %w", op, s.path, err, store.ErrFull)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// openErr maps an error of opening a connection.
func (s *Store) openErr(err error) error { return s.fail("opening the database", err) }
