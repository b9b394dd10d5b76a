package interp

import (
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// countDecodes counts the stored graphs the engine decodes while the test
// runs.
func countDecodes(t *testing.T) *int {
	t.Helper()
	n := new(int)
	old := decodeGraph
	decodeGraph = func(b []byte) (*graph.Graph, error) {
		*n++
		return old(b)
	}
	t.Cleanup(func() { decodeGraph = old })
	return n
}

// TestStoreGraphSeedsTheCache: a graph the engine stores is the graph it
// then hands out and runs, with no decode: storing seeds the one cache
// (apply never decodes what it just encoded). A fresh engine over the same
// store decodes it once.
func TestStoreGraphSeedsTheCache(t *testing.T) {
	decodes := countDecodes(t)
	b := setup(t)
	gs := b.compile(`
workflow "g" {
  version = "1.0.0"
  input "name" {
    type = string
  }
  step "a" {
    set { v = "hello {{ input.name }}" }
  }
  step "b" {
    set { v = "{{ steps.a.output.v }}!" }
  }
}`)
	v, err := b.st.VersionGet(b.ctx, "g", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.e.Graph(b.ctx, "g", v.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if g != gs[0] {
		t.Fatal("Graph after StoreGraph is not the graph stored")
	}
	// Storing indexes none of the graph's expressions: a process that
	// stores a graph and exits (apply --detach) never runs it.
	if l := b.e.graphs.get("g\x00" + v.Hash); l == nil || l.prog.Indexed() {
		t.Fatalf("after StoreGraph the cached program is %v, want one not yet indexed", l)
	}
	run := b.start("g", map[string]any{"name": "x"})
	if run = b.drive(run.ID); run.Status != store.RunCompleted {
		t.Fatalf("run %s", run.Status)
	}
	if *decodes != 0 {
		t.Fatalf("storing, reading and running a graph decoded it %d times, want 0", *decodes)
	}
	// Storing it again (an unchanged apply) keeps the cached graph.
	if _, err := b.e.StoreGraph(b.ctx, gs[0]); err != nil {
		t.Fatal(err)
	}
	e2 := New(b.st, Options{Clock: b.clk})
	if _, err := e2.Graph(b.ctx, "g", v.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Graph(b.ctx, "g", v.Hash); err != nil {
		t.Fatal(err)
	}
	if *decodes != 1 {
		t.Fatalf("a fresh engine decoded the stored graph %d times, want 1", *decodes)
	}
}
