package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

var ctx = context.Background()

func TestOpenCreatesPrivateFiles(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	path := filepath.Join(base, "a", "b", "flowrun.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	// A write makes sure the -wal and -shm files exist.
	if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: "r", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: time.Unix(1, 0)}); err != nil {
		t.Fatalf("RunInsert: %v", err)
	}
	for _, d := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b")} {
		assertMode(t, d, 0o700|os.ModeDir)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		assertMode(t, f, 0o600)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}

func TestOpenAgainKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowrun.db")
	for i := range 2 {
		s, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "normal"})
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		if i == 0 {
			if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: "r", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: time.Unix(1, 0)}); err != nil {
				t.Fatalf("RunInsert: %v", err)
			}
		} else if _, err := s.RunGet(ctx, "r"); err != nil {
			t.Fatalf("RunGet after reopening: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	db := rawDB(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != sqlite.SchemaVersion() {
		t.Errorf("schema_migrations has %d rows, want %d (each migration once)", n, sqlite.SchemaVersion())
	}
}

func TestOpenRefusesNotADatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "notes.txt")
	content := []byte("these are my notes, not a database\n")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err == nil || !strings.Contains(err.Error(), path+" is not a flowrun database: file is not a database") {
		t.Fatalf("Open of a text file: err = %v", err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, content) {
		t.Errorf("the refused file was changed")
	}
	assertOnlyFiles(t, filepath.Dir(path), "notes.txt")
}

func TestOpenRefusesForeignDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	if _, err := db.Exec(`CREATE TABLE photos (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err == nil || !strings.Contains(err.Error(), "is not a flowrun database: it holds other tables (photos)") {
		t.Fatalf("Open of another program's database: err = %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("the refused database was changed")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowrun.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name) VALUES (999, '0999_future')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	_, err = sqlite.Open(ctx, path, sqlite.Options{})
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Open of a newer database: err = %v, want ErrSchemaTooNew", err)
	}
	if !strings.Contains(err.Error(), "schema version 999") || !strings.Contains(err.Error(), "upgrade flowrun") {
		t.Errorf("message %q should name the version and say to upgrade flowrun", err)
	}
	after, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !fi.ModTime().Equal(fi2.ModTime()) {
		t.Errorf("the refused database was written to")
	}
	assertOnlyFiles(t, filepath.Dir(path), "flowrun.db")
}

func TestOpenBadPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ path, want string }{
		"directory":        {dir, "is a directory, not a database file"},
		"parent is a file": {filepath.Join(file, "sub", "flowrun.db"), "cannot create the directory"},
		"empty":            {"", "no database path given"},
	}
	for name, c := range cases {
		_, err := sqlite.Open(ctx, c.path, sqlite.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, c.want)
		}
	}
	if _, err := sqlite.Open(ctx, filepath.Join(dir, "x.db"), sqlite.Options{Synchronous: "OFF"}); err == nil {
		t.Errorf("synchronous OFF was accepted")
	}
	assertOnlyFiles(t, dir, "file")
}

func TestOpenUnwritableDirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes everywhere")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(ctx, filepath.Join(dir, "flowrun.db"), sqlite.Options{})
	if err == nil || !strings.Contains(err.Error(), "cannot create the database file") {
		t.Fatalf("Open in a read-only directory: err = %v", err)
	}
}

func TestBusy(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowrun.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Another connection (as another process would) holds the write lock.
	db := rawDB(t, path)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	_, err = s.RunInsert(ctx, store.RunInsertParams{ID: "r", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: time.Unix(1, 0)})
	if !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), path) {
		t.Fatalf("write while locked: err = %v, want ErrBusy naming the file", err)
	}
	// Reads go on while the writer is locked out (WAL).
	if _, err := s.RunList(ctx, store.RunListParams{}); err != nil {
		t.Fatalf("read while locked: %v", err)
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: "r", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: time.Unix(1, 0)}); err != nil {
		t.Fatalf("write after the lock is gone: %v", err)
	}
}

// rawDB opens the file directly, as another program would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(1000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// assertOnlyFiles fails unless dir holds exactly the named entries.
func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want only %v", dir, got, names)
	}
}
