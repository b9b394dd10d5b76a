package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestUpgradeMovesRunInputs opens a database at schema 4, whose runs hold
// their inputs in their rows, and checks that migration 0005 moves them
// to run_inputs and that the run still reads the same inputs.
func TestUpgradeMovesRunInputs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowrun.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:4] {
		if _, err := db.Exec(m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_migrations (version, name) VALUES (?1, ?2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct{ id, inputs any }{{"run-in", `{"items":[1,2,3]}`}, {"run-none", nil}} {
		if _, err := db.Exec(`INSERT INTO runs (id, workflow, version, graph_hash, status, inputs, created_at, available_at, root_run_id, updated_at)
			VALUES (?1, 'wf', '1.0.0', 'h', 'pending', ?2, 1, 1, ?1, 1)`, r.id, r.inputs); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.RunGet(ctx, "run-in")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Inputs) != `{"items":[1,2,3]}` {
		t.Errorf("inputs after the upgrade = %s, want the ones stored before it", r.Inputs)
	}
	if r, err := s.RunGet(ctx, "run-none"); err != nil || r.Inputs != nil {
		t.Errorf("a run without inputs reads %s (%v), want none", r.Inputs, err)
	}
	var inRow, moved int
	if err := s.w.QueryRow(`SELECT count(*) FROM runs WHERE inputs IS NOT NULL`).Scan(&inRow); err != nil {
		t.Fatal(err)
	}
	if err := s.w.QueryRow(`SELECT count(*) FROM run_inputs`).Scan(&moved); err != nil {
		t.Fatal(err)
	}
	if inRow != 0 || moved != 1 {
		t.Errorf("after the upgrade %d runs hold inputs in their row and run_inputs has %d rows; want 0 and 1", inRow, moved)
	}
	// A new run stores its inputs in run_inputs, and reads them back.
	nr, err := s.RunInsert(ctx, store.RunInsertParams{ID: "run-new", Workflow: "wf", Version: "1.0.0", GraphHash: "h",
		Inputs: json.RawMessage(`{"n":1}`), Now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil || string(nr.Inputs) != `{"n":1}` {
		t.Fatalf("a new run's inputs read %s (%v)", nr.Inputs, err)
	}
	if err := s.w.QueryRow(`SELECT count(*) FROM runs WHERE inputs IS NOT NULL`).Scan(&inRow); err != nil || inRow != 0 {
		t.Errorf("%d runs hold inputs in their row (%v), want 0", inRow, err)
	}
}
