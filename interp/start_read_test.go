package interp

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// graphReads counts the store reads that return stored graphs.
type graphReads struct {
	store.Store
	lists, byHash atomic.Int64
}

func (g *graphReads) VersionList(ctx context.Context, workflow string) ([]store.Version, error) {
	g.lists.Add(1)
	return g.Store.VersionList(ctx, workflow)
}

func (g *graphReads) VersionGetByHash(ctx context.Context, workflow, hash string) (store.Version, error) {
	g.byHash.Add(1)
	return g.Store.VersionGetByHash(ctx, workflow, hash)
}

// TestStartReadsOneGraph: starting a run of a workflow with several stored
// versions reads the graph of the newest one only, once per process (its
// decoded graph is cached), and a child started by a pin likewise.
func TestStartReadsOneGraph(t *testing.T) {
	b := setup(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		b.compile(`workflow "kid" {
  version = "` + v + `"
  step "a" {
    set { v = "` + v + `" }
  }
  output "v" { value = "{{ steps.a.output.v }}" }
}`)
	}
	b.compile(`workflow "parent" {
  version = "1.0.0"
  step "child" {
    workflow {
      name    = "kid"
      version = "1"
    }
  }
  output "v" { value = "{{ steps.child.output.v }}" }
}`)
	gr := &graphReads{Store: b.st}
	b.e = New(gr, b.e.opts)
	run := b.start("kid", nil)
	if run.Version != "2.0.0" {
		t.Fatalf("started version %s, want the newest, 2.0.0", run.Version)
	}
	if gr.lists.Load() != 0 || gr.byHash.Load() != 1 {
		t.Fatalf("starting read %d version lists and %d graphs, want 0 and 1", gr.lists.Load(), gr.byHash.Load())
	}
	b.start("kid", map[string]any{}) // the same run: its graph is cached
	if gr.byHash.Load() != 1 {
		t.Fatalf("a second start read the graph again (%d reads)", gr.byHash.Load())
	}
	done := b.drive(b.start("parent", nil).ID)
	wantStatus(t, done, store.RunCompleted)
	wantJSON(t, "outputs", done.Outputs, `{"v": "1.1.0"}`)
	if gr.lists.Load() != 0 {
		t.Fatalf("the parent and its child read %d version lists, want 0", gr.lists.Load())
	}
}
