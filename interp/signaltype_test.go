package interp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestSignalDataType: Engine.Signal, which the CLI, flowtui and the HTTP
// API call, refuses data that does not have the type the wait step
// declares, writing nothing; data of that type is delivered and becomes
// the step's output.
func TestSignalDataType(t *testing.T) {
	b := setup(t)
	run := b.run(`workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "approval"
      type   = object({ approved = bool, by = string })
    }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	for _, bad := range []string{`{"approved": "yes", "by": "ana"}`, `{}`, `[true]`, `{"approved": true, "by": "ana", "extra": 1}`} {
		_, err := b.e.Signal(b.ctx, run.ID, "approval", json.RawMessage(bad))
		var de *SignalDataError
		if !errors.As(err, &de) || de.Step != "ask" || !strings.Contains(err.Error(), "object({approved = bool, by = string})") {
			t.Fatalf("signal with %s: %v, want a SignalDataError naming the step and type", bad, err)
		}
	}
	if _, err := b.e.Signal(b.ctx, run.ID, "approval", json.RawMessage(`{"approved": true, "by": "ana"}`)); err != nil {
		t.Fatalf("signal of the type: %v", err)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	// The first signal stored is the one the wait takes: none of the
	// refused ones was written.
	wantJSON(t, "ask output", b.show(run.ID).Steps["ask"].Output, `{"approved": true, "by": "ana"}`)
}

// TestSignalDecodesOnlyTypedGraphs: an engine that has not loaded the
// run's graph (flowrun signal, in a process of its own) delivers a signal
// to a run parked on an untyped wait without decoding the graph, as before
// waits had types; a graph that may hold a typed wait is decoded once to
// check the data.
func TestSignalDecodesOnlyTypedGraphs(t *testing.T) {
	b := setup(t)
	untyped := b.run(`workflow "plain" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}`, nil)
	typed := b.run(`workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "go"
      type   = bool
    }
  }
}`, nil)
	wantStatus(t, untyped, store.RunWaiting)
	wantStatus(t, typed, store.RunWaiting)
	decodes := countDecodes(t)
	other := b.otherProcess(nil)
	if _, err := other.Signal(b.ctx, untyped.ID, "go", json.RawMessage(`{"any": "thing"}`)); err != nil {
		t.Fatal(err)
	}
	if *decodes != 0 {
		t.Fatalf("a signal to a run with untyped waits decoded %d graphs", *decodes)
	}
	var de *SignalDataError
	if _, err := other.Signal(b.ctx, typed.ID, "go", json.RawMessage(`"yes"`)); !errors.As(err, &de) {
		t.Fatalf("signal of a string to a bool wait: %v", err)
	}
	if _, err := other.Signal(b.ctx, typed.ID, "go", json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	if *decodes != 1 {
		t.Fatalf("signals to a run with a typed wait decoded %d graphs, want 1 (then cached)", *decodes)
	}
}

// TestCheckSignalDataOnGraph: the check Engine.Signal makes, on a graph a
// caller holds (flowtui's dialog): data of the declared type passes, data
// of another type is a SignalDataError naming the step, a signal no typed
// wait takes passes whatever its data.
func TestCheckSignalDataOnGraph(t *testing.T) {
	b := setup(t)
	run := b.run(`workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "approval"
      type   = object({ approved = bool })
    }
  }
}`, nil)
	g, err := b.e.Graph(b.ctx, run.Workflow, run.GraphHash)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSignalData(g, run.ID, "approval", json.RawMessage(`{"approved": true}`)); err != nil {
		t.Fatalf("data of the type: %v", err)
	}
	var de *SignalDataError
	if err := CheckSignalData(g, run.ID, "approval", json.RawMessage(`"yes"`)); !errors.As(err, &de) || de.Step != "ask" {
		t.Fatalf("data of another type: %v", err)
	}
	if err := CheckSignalData(g, run.ID, "other", json.RawMessage(`"yes"`)); err != nil {
		t.Fatalf("a signal no typed wait takes: %v", err)
	}
}
