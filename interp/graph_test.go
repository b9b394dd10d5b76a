package interp

import (
	"errors"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestGraphIsTheRunnersCachedGraph: Engine.Graph hands out the graph the
// engine's runs use, from the one cache (the same pointer, decoded once),
// and a hash that is not stored is store.ErrNotFound.
func TestGraphIsTheRunnersCachedGraph(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "g" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
}`)
	run := b.start("g", nil)
	run = b.drive(run.ID)
	if run.Status != store.RunCompleted {
		t.Fatalf("run %s", run.Status)
	}
	l := b.e.graphs.get("g\x00" + run.GraphHash)
	if l == nil {
		t.Fatal("the driven run's graph is not cached")
	}
	g, err := b.e.Graph(b.ctx, "g", run.GraphHash)
	if err != nil {
		t.Fatal(err)
	}
	if g != l.g {
		t.Fatal("Graph decoded its own copy instead of using the engine's cache")
	}
	// A fresh engine loads it once, then serves it from the cache.
	e2 := New(b.st, Options{Clock: b.clk})
	g1, err := e2.Graph(b.ctx, "g", run.GraphHash)
	if err != nil {
		t.Fatal(err)
	}
	if g2, _ := e2.Graph(b.ctx, "g", run.GraphHash); g2 != g1 || g1.Workflow != "g" || g1.Version != "1.0.0" || len(g1.Steps) != 1 {
		t.Fatalf("second Graph: %p vs %p (%s %s, %d steps)", g2, g1, g1.Workflow, g1.Version, len(g1.Steps))
	}
	if _, err := b.e.Graph(b.ctx, "g", "00ff"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown hash: %v, want store.ErrNotFound", err)
	}
}
