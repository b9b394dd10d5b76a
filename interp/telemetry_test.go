package interp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	telemetry.Nop // the store and lease reports are tested in recover_test.go
	mu            sync.Mutex
	started       []telemetry.Run
	ended         []telemetry.Run
	attempts      []telemetry.Attempt
	claimed       int
	commits       int
}

func (r *recorder) RunStarted(x telemetry.Run) {
	r.mu.Lock()
	r.started = append(r.started, x)
	r.mu.Unlock()
}
func (r *recorder) RunEnded(x telemetry.Run) {
	r.mu.Lock()
	r.ended = append(r.ended, x)
	r.mu.Unlock()
}
func (r *recorder) AttemptEnded(a telemetry.Attempt) {
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
}
func (r *recorder) Claimed(n int)    { r.mu.Lock(); r.claimed += n; r.mu.Unlock() }
func (r *recorder) Reclaimed(string) {}
func (r *recorder) Committed(time.Duration, bool) {
	r.mu.Lock()
	r.commits++
	r.mu.Unlock()
}
func (r *recorder) ScheduleFired(string, time.Duration)                 {}
func (r *recorder) ScheduleSlotFailed(string, string, time.Time, error) {}

// TestObserver: the engine tells its Observer of each run's first claim
// and end, and of each exec and http attempt's end with its step, kind,
// outcome, error kind and times; a child run joins its parent's trace
// (its root span a child of the parent's); TRACEPARENT reaches an exec
// program and the traceparent header an http server, each naming the
// attempt's span in the run's trace.
func TestObserver(t *testing.T) {
	rec := &recorder{}
	b := setup(t, func(o *Options) { o.Observer = rec; o.Traceparent = true })
	dir := t.TempDir()
	tpFile := filepath.Join(dir, "tp")
	var mu sync.Mutex
	var header string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		header = r.Header.Get("Traceparent")
		mu.Unlock()
	}))
	defer srv.Close()
	b.compile(`
workflow "kid" {
  version = "1.0.0"
  step "k" {
    exec { command = ["true"] }
  }
}`)
	run := b.run(`
workflow "obs" {
  version = "1.0.0"
  step "tp" {
    exec { command = ["sh", "-c", "echo $TRACEPARENT > `+tpFile+`"] }
  }
  step "flaky" {
    retry {
      attempts = 2
      backoff  = "0s"
    }
    on_error = "continue"
    exec { command = ["sh", "-c", "exit 3"] }
  }
  step "call" {
    http { url = "`+srv.URL+`" }
  }
  step "child" {
    workflow {
      name    = "kid"
      version = "1"
    }
  }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	stored, err := b.st.RunGet(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	tr := stored.Trace
	if len(tr.TraceID) != 32 || len(tr.SpanID) != 16 || tr.ParentSpanID != "" {
		t.Fatalf("the run's trace = %+v, want a trace id, a span id and no parent", tr)
	}
	kids, err := b.st.RunChildren(b.ctx, run.ID)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v %v", kids, err)
	}
	if kt := kids[0].Trace; kt.TraceID != tr.TraceID || kt.ParentSpanID != tr.SpanID || kt.SpanID == tr.SpanID || len(kt.SpanID) != 16 {
		t.Errorf("the child's trace = %+v, want the parent's trace %s with its root span a child of %s", kt, tr.TraceID, tr.SpanID)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.started) != 2 || len(rec.ended) != 2 || rec.claimed < 2 || rec.commits == 0 {
		t.Errorf("started %d, ended %d, claimed %d, commits %d; want 2 runs started and ended, 2 claims or more, commits", len(rec.started), len(rec.ended), rec.claimed, rec.commits)
	}
	var got []string
	for _, a := range rec.attempts {
		if a.Run.Workflow == "obs" && a.Run.Trace != runTrace(stored) {
			t.Errorf("attempt %s/%d carries trace %+v, want the run's %+v", a.StepKey, a.Attempt, a.Run.Trace, runTrace(stored))
		}
		if a.Finished.Before(a.Started) || a.Started.IsZero() {
			t.Errorf("attempt %s/%d: started %v, finished %v", a.StepKey, a.Attempt, a.Started, a.Finished)
		}
		got = append(got, a.Run.Workflow+"/"+a.Step+"/"+a.Kind+"/"+a.Status+"/"+a.ErrKind)
	}
	want := []string{"obs/tp/exec/completed/", "obs/flaky/exec/failed/exec", "obs/flaky/exec/failed/exec", "obs/call/http/completed/", "kid/k/exec/completed/"}
	for _, w := range want {
		n := 0
		for _, g := range got {
			if g == w {
				n++
			}
		}
		if wn := strings.Count(strings.Join(want, " "), w); n != wn {
			t.Errorf("attempts %q: %d, want %d (all: %v)", w, n, wn, got)
		}
	}
	for _, r := range rec.ended {
		if r.Status != "completed" {
			t.Errorf("run %s ended %s", r.Workflow, r.Status)
		}
	}

	tp, err := os.ReadFile(tpFile)
	if err != nil {
		t.Fatal(err)
	}
	if w := telemetry.Traceparent(tr.TraceID, telemetry.AttemptSpanID(run.ID, "tp", 1)); strings.TrimSpace(string(tp)) != w {
		t.Errorf("TRACEPARENT = %q, want %q", tp, w)
	}
	mu.Lock()
	defer mu.Unlock()
	if w := telemetry.Traceparent(tr.TraceID, telemetry.AttemptSpanID(run.ID, "call", 1)); header != w {
		t.Errorf("traceparent header = %q, want %q", header, w)
	}
}

// TestNoTraceparentByDefault: without Options.Traceparent no program gets
// TRACEPARENT.
func TestNoTraceparentByDefault(t *testing.T) {
	b := setup(t)
	out := filepath.Join(t.TempDir(), "tp")
	run := b.run(`
workflow "plain" {
  version = "1.0.0"
  step "tp" {
    exec { command = ["sh", "-c", "echo \"[$TRACEPARENT]\" > `+out+`"] }
  }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != "[]" {
		t.Errorf("TRACEPARENT = %s, want none", got)
	}
}

// fireRecorder keeps the schedule fires an Observer is told of.
type fireRecorder struct {
	telemetry.Nop
	mu   sync.Mutex
	lags []time.Duration
}

func (f *fireRecorder) ScheduleFired(workflow string, lag time.Duration) {
	f.mu.Lock()
	f.lags = append(f.lags, lag)
	f.mu.Unlock()
}

// TestObserverScheduleFired: each slot a pass fires is reported with its
// lag, from the slot to the pass's fire, on the engine clock.
func TestObserverScheduleFired(t *testing.T) {
	rec := &fireRecorder{}
	b := setup(t, func(o *Options) { o.Observer = rec })
	b.clk.Set(time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC))
	b.activate("1.0.0", "allow", "all")
	b.clk.Advance(2*time.Minute + 10*time.Second) // the slots of 03:05 and 03:06 are due, 100 s and 40 s ago
	if _, err := b.e.FireDue(b.ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.lags) != 2 || rec.lags[0] != 100*time.Second || rec.lags[1] != 40*time.Second {
		t.Errorf("fire lags %v, want [1m40s 40s]", rec.lags)
	}
}

// TestObserverCancelUnheld: canceling a parked run, which the store ends
// at once since nobody holds it, reports its end.
func TestObserverCancelUnheld(t *testing.T) {
	rec := &recorder{}
	b := setup(t, func(o *Options) { o.Observer = rec })
	run := b.run(`
workflow "parked" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	if _, err := b.e.Cancel(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ended) != 1 || rec.ended[0].ID != run.ID || rec.ended[0].Status != "canceled" || rec.ended[0].Trace.TraceID == "" || rec.ended[0].Finished.IsZero() {
		t.Errorf("ended %+v, want the run canceled, with its trace and end", rec.ended)
	}
}

// TestTraceparentNotSampled: a run whose trace the tracer does not export
// gives its programs a trace context whose sampled flag is off.
func TestTraceparentNotSampled(t *testing.T) {
	b := setup(t, func(o *Options) {
		o.Traceparent = true
		o.TraceSampled = func(string) bool { return false }
	})
	out := filepath.Join(t.TempDir(), "tp")
	run := b.run(`
workflow "unsampled" {
  version = "1.0.0"
  step "tp" {
    exec { command = ["sh", "-c", "echo $TRACEPARENT > `+out+`"] }
  }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := telemetry.TraceparentFlags(telemetry.NewTrace(run.ID).TraceID, telemetry.AttemptSpanID(run.ID, "tp", 1), false)
	if strings.TrimSpace(string(got)) != want || !strings.HasSuffix(want, "-00") {
		t.Errorf("TRACEPARENT = %q, want %q", got, want)
	}
}
