package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// TestMigrationsAreAllOrNothing: the missing migrations are applied in
// one transaction, so one that fails leaves the database at the version
// it had, none of the others' changes written.
func TestMigrationsAreAllOrNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowrun.db")
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", dsn(path, "rwc", "immediate"))
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	s := &Store{path: path, w: w, stmts: map[stmtKey]*sql.Stmt{}}
	defer w.Close()
	if err := s.apply(ctx, ms[:4]); err != nil {
		t.Fatal(err)
	}
	broken := append(ms[4:6:6], sqlrow.Migration{Version: 7, Name: "0007_broken", SQL: `CREATE TABLE oops (`})
	err = s.apply(ctx, broken)
	if err == nil || !strings.Contains(err.Error(), "applying migration 0007_broken") {
		t.Fatalf("applying a broken migration: %v", err)
	}
	var have, inputs int
	if err := w.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&have); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'run_inputs'`).Scan(&inputs); err != nil {
		t.Fatal(err)
	}
	if have != 4 || inputs != 0 {
		t.Errorf("after a failed upgrade the version is %d and run_inputs exists %d times; want 4 and 0 (%s and %s were rolled back too)",
			have, inputs, ms[4].Name, ms[5].Name)
	}
	// The same upgrade without the broken one applies both.
	if err := s.apply(ctx, ms[4:6]); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&have); err != nil || have != 6 {
		t.Errorf("version %d (%v), want 6", have, err)
	}
}
