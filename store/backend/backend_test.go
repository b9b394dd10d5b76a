package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "flowrun.db")

	if _, err := Open(ctx, path, Options{}); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("missing file without CreateFile: err = %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused open created %s", filepath.Dir(path))
	}

	o, err := Open(ctx, "sqlite://"+path, Options{CreateFile: true})
	if err != nil {
		t.Fatal(err)
	}
	if o.Postgres || o.Title != path {
		t.Errorf("Opened = %+v, want the SQLite path as the title", o)
	}
	o.Store.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("database mode %o, want 600", perm)
	}

	o, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("existing file: %v", err)
	}
	o.Store.Close()

	if _, err := Open(ctx, dir, Options{CreateFile: true}); !errors.Is(err, ErrNotAFile) {
		t.Errorf("directory: err = %v, want ErrNotAFile", err)
	}
}

func TestOpenBadDSN(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{"mysql://u@h/db", "postgres:/x", "SQLITE://a.db", "postgres://%zz"} {
		if _, err := Open(ctx, dsn, Options{CreateFile: true}); !errors.Is(err, ErrBadDSN) {
			t.Errorf("Open(%q): err = %v, want ErrBadDSN", dsn, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("bad values created %d entries in the working directory", len(ents))
	}
}
