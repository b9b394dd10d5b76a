package interp

import (
	"fmt"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

func cacheGraph(n int) *loaded {
	return &loaded{g: &graph.Graph{Steps: make([]*graph.Step, n)}}
}

// TestGraphCacheBound: the cache keeps the most recently used graphs
// within its bound on total steps, always keeps the last one used, and
// gives the first graph cached for a key to a goroutine that decoded the
// same one meanwhile.
func TestGraphCacheBound(t *testing.T) {
	c := newGraphCache(100)
	a, b := cacheGraph(40), cacheGraph(40)
	c.put("a", a)
	c.put("b", b)
	if c.get("a") != a { // a is now the most recent
		t.Fatal("a is not cached")
	}
	c.put("c", cacheGraph(40)) // 120 steps: the least recent, b, goes
	if c.get("b") != nil {
		t.Fatal("b was kept over the bound although it was used least recently")
	}
	if c.get("a") != a || c.get("c") == nil {
		t.Fatal("a recent graph was dropped")
	}
	if c.steps != 80 {
		t.Fatalf("the cache counts %d steps, want 80", c.steps)
	}
	huge := cacheGraph(500)
	c.put("huge", huge)
	if c.get("huge") != huge || c.get("a") != nil || c.get("c") != nil || c.steps != 500 {
		t.Fatalf("a graph over the bound by itself must be kept alone (steps %d)", c.steps)
	}
	other := cacheGraph(5)
	if got := c.put("huge", other); got != huge {
		t.Fatal("a second put of a cached key replaced the first graph")
	}
	for i := range 50 {
		c.put(fmt.Sprint(i), cacheGraph(10))
	}
	if c.lru.Len() != 10 || c.steps != 100 || len(c.byKey) != 10 {
		t.Fatalf("%d graphs, %d steps, %d keys cached; want 10, 100, 10", c.lru.Len(), c.steps, len(c.byKey))
	}
}
