package server

import (
	"net/http"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestSignalTyped: data of another type than the wait step declares is
// refused with 422 naming the step, the type and the mismatch, and nothing
// is stored; data of the type is accepted (the check is the engine's, so
// the API inherits it).
func TestSignalTyped(t *testing.T) {
	a := newAPI(t)
	a.apply(`
workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "approval"
      type   = object({ approved = bool, by = string })
    }
  }
}
`)
	id := a.start("typed", `{}`)
	if run := a.drive(id); run.Status != store.RunWaiting {
		t.Fatalf("run %s, want waiting", run.Status)
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/approval", `{"approved": "yes", "by": "ana"}`).
		problem(t, http.StatusUnprocessableEntity, `step "ask"`, "object({approved = bool, by = string})", "data.approved must be a bool, got a string")
	if sigs, _ := a.st.SignalList(a.ctx, id, false); len(sigs) != 0 {
		t.Fatalf("a refused signal was stored: %v", sigs)
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/approval", `{"approved": true, "by": "ana"}`).want(t, http.StatusAccepted)
	if run := a.drive(id); run.Status != store.RunCompleted {
		t.Fatalf("run %s after the signal, want completed", run.Status)
	}
}
