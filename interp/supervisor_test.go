package interp

import (
	"bytes"
	"runtime"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestFlightGoroutineReused: the actions of a sequential chain run on one
// goroutine, handed each flight in turn (goFlight), not on a new goroutine
// per action whose stack grows again for every step.
func TestFlightGoroutineReused(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	b := setup(t, func(o *Options) {
		o.Mock = func(c MockCall) (MockResult, bool) {
			if c.Probe {
				return MockResult{}, true
			}
			buf := make([]byte, 64)
			buf = buf[:runtime.Stack(buf, false)]
			id, _, _ := bytes.Cut(bytes.TrimPrefix(buf, []byte("goroutine ")), []byte(" "))
			mu.Lock()
			seen[string(id)] = true
			mu.Unlock()
			return MockResult{Output: map[string]any{"status": 200, "headers": map[string]any{}, "body": "ok"}}, true
		}
	})
	b.compile(`
workflow "chain" {
  version = "1.0.0"
  step "a" {
    http { url = "http://127.0.0.1:1/a" }
  }
  step "b" {
    depends_on = [step.a]
    http { url = "http://127.0.0.1:1/b" }
  }
  step "c" {
    depends_on = [step.b]
    http { url = "http://127.0.0.1:1/c" }
  }
  step "d" {
    depends_on = [step.c]
    http { url = "http://127.0.0.1:1/d" }
  }
}`)
	run := b.start("chain", nil)
	if got := b.drive(run.ID); got.Status != store.RunCompleted {
		t.Fatalf("run %s, want completed", got.Status)
	}
	if len(seen) != 1 {
		t.Errorf("the chain's 4 actions ran on %d goroutines, want 1", len(seen))
	}
}
