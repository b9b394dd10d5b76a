package interp

import (
	"errors"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestMockHook: Options.Mock replaces exec, http, wait and workflow actions
// where they are dispatched; the engine records and retries them as real
// ones. The exec's program does not exist and the http URL does not
// answer: only the mocks can complete them.
func TestMockHook(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	b := setup(t, func(o *Options) {
		o.Mock = func(c MockCall) (MockResult, bool) {
			if c.Probe {
				return MockResult{}, c.Step == "build" || c.Step == "charge"
			}
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, c.Step+"/"+c.Kind)
			switch c.Step {
			case "build":
				if c.Attempt == 1 {
					code := 75
					return MockResult{Error: &MockError{Kind: "exec", Message: "busy", ExitCode: &code}}, true
				}
				return MockResult{Output: map[string]any{"stdout": "built", "exit_code": 0, "stderr": "", "json": nil}}, true
			case "charge":
				return MockResult{Output: map[string]any{"status": 201, "headers": map[string]any{}, "body": "ok"}}, true
			case "approve":
				return MockResult{Output: map[string]any{"by": "ana"}}, true
			case "child":
				return MockResult{Output: map[string]any{"n": 7}}, true
			}
			return MockResult{}, false
		}
	})
	b.compile(`
workflow "kid" {
  version = "1.0.0"
  step "x" {
    set { v = 1 }
  }
  output "n" { value = "{{ steps.x.output.v }}" }
}
workflow "mocked" {
  version = "1.0.0"
  step "build" {
    exec { command = ["/nonexistent/build"] }
    retry {
      attempts = 3
      backoff  = "1s"
    }
  }
  step "charge" {
    http {
      method = "POST"
      url    = "http://127.0.0.1:1/charge"
    }
  }
  step "approve" {
    wait { signal = "approval" }
  }
  step "child" {
    workflow {
      name    = "kid"
      version = "1"
    }
  }
  output "all" { value = "{{ steps.build.output.stdout }} {{ steps.charge.output.status }} {{ steps.approve.output.by }} {{ steps.child.output.n }}" }
}`)
	run := b.start("mocked", nil)
	for i := 0; i < 5 && !b.drive(run.ID).Status.Terminal(); i++ {
		b.clk.Advance(2 * 1e9) // the build's backoff
	}
	got, err := b.st.RunGet(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, got, store.RunCompleted)
	wantJSON(t, "outputs", got.Outputs, `{"all":"built 201 ana 7"}`)
	if as := b.attempts(run.ID, "build"); len(as) != 2 || as[0].Status != store.AttemptFailed {
		t.Fatalf("build attempts = %+v, want a failed one and a completed one", as)
	}
	if kids, _ := b.st.RunChildren(b.ctx, run.ID); len(kids) != 0 {
		t.Fatalf("a mocked workflow step started %d child runs", len(kids))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 5 {
		t.Fatalf("mock calls = %v, want build twice, charge, approve, child", calls)
	}
}

// TestBeforeCommitCrash: Options.BeforeCommit refusing every commit from
// the first on leaves the store as a process killed right after it
// claimed the run; a new engine over the store finishes the run with the
// outputs of an uninterrupted run.
func TestBeforeCommitCrash(t *testing.T) {
	src := `
workflow "three" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
  step "b" {
    sleep { duration = "1h" }
    depends_on = [step.a]
  }
  step "c" {
    set { v = "{{ steps.a.output.v + 1 }}" }
    depends_on = [step.b]
  }
  output "c" { value = "{{ steps.c.output.v }}" }
}`
	crashed := errors.New("crashed")
	n := 0
	b := setup(t, func(o *Options) {
		o.BeforeCommit = func([]store.Transition) error {
			if n >= 0 {
				return crashed
			}
			n++
			return nil
		}
	})
	b.compile(src)
	run := b.start("three", nil)
	if _, err := b.e.Drive(b.ctx, run.ID); !errors.Is(err, crashed) {
		t.Fatalf("drive after the crash point: %v, want the hook's error", err)
	}
	// A second engine on the store, as a restarted worker; the first one's
	// lease is expired as a dead owner's would be.
	after := New(b.st, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 2, Worker: "u"}, ParkWait: -1})
	if _, err := b.st.LeaseExpire(b.ctx, store.LeaseExpireParams{Owners: []string{"testhost/1/t1"}, Now: b.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := after.Drive(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunWaiting {
		t.Fatalf("status %s, want waiting on the sleep", got.Status)
	}
	b.clk.Advance(3600 * 1e9)
	got, err = after.Drive(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := b.st.RunGet(b.ctx, run.ID)
	wantStatus(t, got, store.RunCompleted)
	wantJSON(t, "outputs", full.Outputs, `{"c":2}`)
}
