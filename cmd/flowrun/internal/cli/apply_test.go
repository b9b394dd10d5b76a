package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// graphReads is a store that counts the stored graphs it hands out.
type graphReads struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (s *graphReads) count(vs ...store.Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		if len(v.Graph) > 0 {
			s.n++
		}
	}
}

func (s *graphReads) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	s.n = 0
	return n
}

func (s *graphReads) VersionGet(ctx context.Context, workflow, version string) (store.Version, error) {
	v, err := s.Store.VersionGet(ctx, workflow, version)
	s.count(v)
	return v, err
}

func (s *graphReads) VersionGetByHash(ctx context.Context, workflow, hash string) (store.Version, error) {
	v, err := s.Store.VersionGetByHash(ctx, workflow, hash)
	s.count(v)
	return v, err
}

func (s *graphReads) VersionList(ctx context.Context, workflow string) ([]store.Version, error) {
	vs, err := s.Store.VersionList(ctx, workflow)
	s.count(vs...)
	return vs, err
}

// TestApplyReadsNoGraphItStored: apply stores the versions of its files and
// runs one without reading back a graph it has just stored (the engine's
// cache is seeded with the compiled graph). Applying the same files again
// in a new process reads each stored graph once, for the version check,
// and the run uses that read.
func TestApplyReadsNoGraphItStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "w.hcl")
	if err := os.WriteFile(file, []byte(`
workflow "child" {
  version = "1.0.0"
  step "c" {
    set { v = "c" }
  }
  output "v" { value = "{{ steps.c.output.v }}" }
}

workflow "parent" {
  version = "1.0.0"
  input "name" {
    type = string
  }
  step "a" {
    set { v = "hello {{ input.name }}" }
  }
  step "b" {
    workflow {
      name    = "child"
      version = "1"
    }
  }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "flowrun.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	counted := &graphReads{Store: st}
	apply := func(args ...string) {
		t.Helper()
		var out, errs bytes.Buffer
		e := &env{stdout: &out, stderr: &errs, getenv: func(string) string { return "" },
			clock: clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), opened: openedStore{st: counted}}
		if code := e.main(ctx, append([]string{"apply", "--no-tui"}, args...)); code != ExitOK {
			t.Fatalf("apply %v: exit %d\n%s", args, code, errs.String())
		}
	}
	apply(file, "--workflow", "parent", "--input", "name=x")
	if n := counted.reads(); n != 0 {
		t.Fatalf("the first apply read %d stored graphs, want 0 (it stored them all)", n)
	}
	apply(file, "--workflow", "parent", "--input", "name=y")
	if n := counted.reads(); n != 2 {
		t.Fatalf("applying the same files again read %d stored graphs, want 2 (each workflow's once)", n)
	}
}
