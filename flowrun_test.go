package flowrun_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun"
	"github.com/flowrun/flowrun/store"
)

// TestOpenMissing: without Create a missing SQLite file is ErrNoDatabase
// and nothing is created.
func TestOpenMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "flowrun.db")
	_, err := flowrun.Open(context.Background(), path, flowrun.Options{})
	if !errors.Is(err, flowrun.ErrNoDatabase) {
		t.Fatalf("Open of a missing file: %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created %s", filepath.Dir(path))
	}
}

func openTemp(t *testing.T) *flowrun.Flow {
	t.Helper()
	f, err := flowrun.Open(context.Background(), filepath.Join(t.TempDir(), "flowrun.db"), flowrun.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestLoadErrors: a file with errors is a *LoadError naming file:line:col,
// and nothing is stored.
func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	f := openTemp(t)
	_, err := f.LoadSource(ctx, "bad.hcl", []byte("workflow \"w\" {\n  version = \"1.2\"\n  step \"a\" {\n    set { x = 1 }\n  }\n}\n"))
	var le *flowrun.LoadError
	if !errors.As(err, &le) || len(le.Diagnostics) == 0 || !strings.Contains(le.Diagnostics[0], "bad.hcl:2") {
		t.Fatalf("LoadSource of a bad version: %v, want a *LoadError at bad.hcl:2", err)
	}
	if _, err := f.Start(ctx, "w", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Start after a failed load: %v, want no version stored", err)
	}
}

// TestApplyRefusals: a released version with another graph, and a
// development version an unfinished run is bound to, are *VersionError
// and store nothing.
func TestApplyRefusals(t *testing.T) {
	ctx := context.Background()
	f := openTemp(t)
	apply := func(version, x string) error {
		t.Helper()
		mod, err := f.LoadSource(ctx, "w.hcl", []byte("workflow \"w\" {\n  version = \""+version+"\"\n  step \"a\" {\n    set { x = \""+x+"\" }\n  }\n}\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Apply(ctx, mod)
		return err
	}
	if err := apply("0.1.0", "a"); err != nil {
		t.Fatal(err)
	}
	run, err := f.Start(ctx, "w", nil) // pending: bound to 0.1.0
	if err != nil {
		t.Fatal(err)
	}
	err = apply("0.1.0", "b")
	var ve *flowrun.VersionError
	if !errors.As(err, &ve) || !errors.Is(err, store.ErrVersionInUse) || !strings.Contains(err.Error(), run.ID) {
		t.Fatalf("replacing 0.1.0 under pending run %s: %v, want a *VersionError naming it", run.ID, err)
	}
	if run, err = f.Wait(ctx, run.ID); err != nil || run.Status != "completed" {
		t.Fatalf("Wait: %s, %v", run.Status, err)
	}
	if err := apply("0.1.0", "b"); err != nil {
		t.Fatalf("replacing 0.1.0 once its run completed: %v", err)
	}
	if err := apply("1.0.0", "a"); err != nil {
		t.Fatal(err)
	}
	if err := apply("1.0.0", "b"); !errors.As(err, &ve) || ve.Version != "1.0.0" {
		t.Fatalf("another graph of 1.0.0: %v, want a *VersionError", err)
	}
}
