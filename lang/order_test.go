package lang

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOrderSmallestReadyFirst: on random step graphs (with repeated edges
// and, some, cycles), order puts each step after every step it needs,
// taking at each place the smallest name among the steps that are ready
// there; a graph with a cycle takes the cyclic order.
func TestOrderSmallestReadyFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(40)
		w := &workflowDecl{Name: "w"}
		for i := range n {
			w.Steps = append(w.Steps, &stepDecl{Name: fmt.Sprintf("s%d", r.IntN(1000)*100+i)})
		}
		c := newCompiler(w, nil)
		cyclic := trial%5 == 0
		for i, s := range w.Steps {
			for range r.IntN(4) {
				j := r.IntN(n)
				if j == i || (!cyclic && j > i) {
					continue // needs only earlier steps: no cycle
				}
				c.edges[s.Name] = append(c.edges[s.Name], stepEdge{to: w.Steps[j].Name})
			}
		}
		got := c.order()
		if len(got) != n {
			t.Fatalf("trial %d: %d of %d steps ordered", trial, len(got), n)
		}
		if hasCycle(c) {
			continue // the cyclic order, checked by the cycle tests
		}
		done := map[string]bool{}
		for k, s := range got {
			var ready []string
			for _, name := range c.names {
				if done[name] {
					continue
				}
				ok := true
				for _, e := range c.edges[name] {
					ok = ok && done[e.to]
				}
				if ok {
					ready = append(ready, name)
				}
			}
			if len(ready) == 0 || s.Name != slices.Min(ready) {
				t.Fatalf("trial %d: place %d holds %s, the ready steps are %v", trial, k, s.Name, ready)
			}
			done[s.Name] = true
		}
	}
}

// hasCycle reports whether the compiler's step graph has a cycle.
func hasCycle(c *compiler) bool {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case 1:
			return true
		case 2:
			return false
		}
		state[n] = 1
		for _, e := range c.edges[n] {
			if visit(e.to) {
				return true
			}
		}
		state[n] = 2
		return false
	}
	for _, n := range c.names {
		if visit(n) {
			return true
		}
	}
	return false
}
