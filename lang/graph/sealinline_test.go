package graph

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// goroutinesCreated is the process's count of goroutines created so far.
func goroutinesCreated(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("runtime/metrics has no %s", s[0].Name)
	}
	return s[0].Value.Uint64()
}

// TestSealSmallGraphOnCaller: Seal hashes a graph smaller than
// ParallelStepDecode steps on the caller's goroutine, starting none (a new
// goroutine's stack is copied as the encoder's calls deepen), and a
// larger one on the caller and one goroutine fewer than it uses workers.
func TestSealSmallGraphOnCaller(t *testing.T) {
	// A collection starts the collector's goroutines.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	old := ParallelStepDecode
	ParallelStepDecode = 4
	t.Cleanup(func() { ParallelStepDecode = old })
	// With ParallelStepDecode 4, 3 steps are one worker's and 8 two
	// workers' (one on the caller) when there are two processors or more.
	for _, c := range []struct{ steps, goroutines int }{{3, 0}, {8, 1}} {
		g := &Graph{Workflow: "w", Version: "1.0.0"}
		for i := range c.steps {
			g.Steps = append(g.Steps, irStep(fmt.Sprintf("s%02d", i), irExec("echo", fmt.Sprint(i))))
		}
		before := goroutinesCreated(t)
		Seal(g)
		if n := goroutinesCreated(t) - before; n > uint64(c.goroutines) {
			t.Errorf("Seal of %d steps started %d goroutines, want %d", c.steps, n, c.goroutines)
		}
		for _, s := range g.Steps {
			if want, _ := StepHash(s); s.Hash != want || want == "" {
				t.Errorf("step %s: hash %q, want %q", s.Name, s.Hash, want)
			}
		}
	}
}
