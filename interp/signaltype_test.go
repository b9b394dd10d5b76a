package interp

import (
	"database/sql"
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

// TestSignalReadsNoGraph: an engine that has not loaded the run's graph
// (flowrun signal, in a process of its own) checks a signal's data against
// the typed waits stored beside the graph: it neither reads nor decodes
// the graph, refuses data of another type with the very error the engine
// holding the graph gives, and delivers data of the type; a signal to a
// run parked on an untyped wait is delivered likewise.
func TestSignalReadsNoGraph(t *testing.T) {
	b := setup(t)
	untyped := b.run(`workflow "plain" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}`, nil)
	typed := b.run(`workflow "typed" {
  version = "1.0.0"
  step "first" {
    wait { signal = "go" }
  }
  step "ask" {
    wait {
      signal = "go"
      type   = object({ ok = bool, by = list(string) })
    }
  }
  step "again" {
    depends_on = [step.ask]
    wait {
      signal = "go"
      type   = object({ ok = bool, by = list(string) })
    }
  }
}`, nil)
	wantStatus(t, untyped, store.RunWaiting)
	wantStatus(t, typed, store.RunWaiting)
	const bad = `{"ok": true, "by": "ana"}`
	_, want := b.e.Signal(b.ctx, typed.ID, "go", json.RawMessage(bad))
	var de *SignalDataError
	if !errors.As(want, &de) || de.Step != "ask" {
		t.Fatalf("signal of the wrong type, graph cached: %v", want)
	}
	decodes := countDecodes(t)
	reads := &graphReads{}
	other := b.otherProcess(func(st store.Store) store.Store { reads.Store = st; return reads })
	if _, err := other.Signal(b.ctx, untyped.ID, "go", json.RawMessage(`{"any": "thing"}`)); err != nil {
		t.Fatal(err)
	}
	_, err := other.Signal(b.ctx, typed.ID, "go", json.RawMessage(bad))
	if !errors.As(err, &de) || err.Error() != want.Error() || de.Step != "ask" || de.Type.String() != "object({by = list(string), ok = bool})" {
		t.Fatalf("signal of the wrong type from another process:\n%v\nwant\n%v", err, want)
	}
	if _, err := other.Signal(b.ctx, typed.ID, "go", json.RawMessage(`{"ok": false, "by": ["ana"]}`)); err != nil {
		t.Fatalf("signal of the type from another process: %v", err)
	}
	if *decodes != 0 || reads.byHash.Load() != 0 {
		t.Fatalf("signals from another process decoded %d graphs and read %d, want none", *decodes, reads.byHash.Load())
	}
}

// TestSignalWithoutStoredTypes: a version stored before its typed waits
// were recorded beside it (signal_types NULL) is still checked, through
// its graph, decoded only when it may hold a typed wait; storing the same
// graph again records them.
func TestSignalWithoutStoredTypes(t *testing.T) {
	b := setup(t)
	src := `workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "go"
      type   = bool
    }
  }
}`
	typed := b.run(src, nil)
	untyped := b.run(`workflow "plain" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}`, nil)
	wantStatus(t, typed, store.RunWaiting)
	db, err := sql.Open("sqlite", "file:"+b.st.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE workflow_versions SET signal_types = NULL`); err != nil {
		t.Fatal(err)
	}
	if raw, err := b.st.VersionSignalTypes(b.ctx, "typed", typed.GraphHash); err != nil || raw != nil {
		t.Fatalf("signal types after clearing them: %s, %v", raw, err)
	}
	decodes := countDecodes(t)
	other := b.otherProcess(nil)
	if _, err := other.Signal(b.ctx, untyped.ID, "go", json.RawMessage(`"anything"`)); err != nil {
		t.Fatal(err)
	}
	if *decodes != 0 {
		t.Fatalf("a signal to a run with untyped waits decoded %d graphs", *decodes)
	}
	var de *SignalDataError
	if _, err := other.Signal(b.ctx, typed.ID, "go", json.RawMessage(`"yes"`)); !errors.As(err, &de) || de.Step != "ask" {
		t.Fatalf("signal of a string to a bool wait of a version without stored types: %v", err)
	}
	if _, err := other.Signal(b.ctx, typed.ID, "go", json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	if *decodes != 1 {
		t.Fatalf("signals to a run with a typed wait decoded %d graphs, want 1 (then cached)", *decodes)
	}
	b.compile(src)
	raw, err := b.st.VersionSignalTypes(b.ctx, "typed", typed.GraphHash)
	if err != nil || string(raw) != `{"go":[{"step":"ask","type":{"kind":"bool"}}]}` {
		t.Fatalf("signal types after storing the graph again: %s, %v", raw, err)
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
