package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

const recordsHCL = `workflow "rec" {
  version = "1.0.0"
  input "id" { type = string }
  step "first" {
    set { v = "{{ input.id }}" }
  }
  step "ask" {
    depends_on = [step.first]
    wait { signal = "go" }
  }
}`

// The records a live face follows (spec/api.md §11): each route answers
// the store's record in its JSON form (checked against spec/openapi.yaml
// by the harness), with the server's own paths left out; a read token is
// enough; events after an id wait for the commit that appends one.
func TestRecords(t *testing.T) {
	a := newAPI(t, realClock)
	// The version is stored as apply stores it, with the directory it was
	// applied from: a path of the server's, which no answer may show.
	const serverDir = "/srv/flowrun/only-the-server-knows"
	m, diags := lang.LoadFile("rec.hcl", []byte(recordsHCL))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if _, err := a.eng.StoreGraphAt(a.ctx, m.Workflows[0].Graph, serverDir); err != nil {
		t.Fatal(err)
	}
	var started struct {
		RunID string `json:"run_id"`
	}
	decode(t, a.do(store.ScopeWrite, "POST", "/v1/workflows/rec/runs", `{"inputs": {"id": "a"}}`).want(t, http.StatusCreated).body, &started)
	id := started.RunID
	if _, err := a.eng.Drive(a.ctx, id); err != nil {
		t.Fatal(err)
	}

	if got, _ := a.st.RunGet(a.ctx, id); got.WorkDir != serverDir {
		t.Fatalf("the run's work_dir is %q, want %q", got.WorkDir, serverDir)
	}
	var run store.Run
	body := a.do(store.ScopeRead, "GET", "/v1/records/runs/"+id[:12], "").want(t, http.StatusOK).body
	if strings.Contains(string(body), serverDir) {
		t.Fatalf("the run's record shows the server's directory: %s", body)
	}
	decode(t, body, &run)
	if run.ID != id || run.Status != store.RunWaiting || run.WaitReason != "signal:go" || run.WorkDir != "" || run.GraphHash == "" {
		t.Fatalf("the run's record: %+v", run)
	}
	var steps []store.Step
	decode(t, a.do(store.ScopeRead, "GET", "/v1/records/runs/"+id+"/steps", "").want(t, http.StatusOK).body, &steps)
	if len(steps) != 2 || steps[0].Key != "first" || steps[0].Status != store.StepCompleted || string(steps[0].Output) != `{"v":"a"}` {
		t.Fatalf("the steps' records: %+v", steps)
	}
	var attempts []store.Attempt
	decode(t, a.do(store.ScopeRead, "GET", "/v1/records/runs/"+id+"/attempts?step=first", "").want(t, http.StatusOK).body, &attempts)
	if attempts == nil { // a set step keeps no attempt rows: an empty list
		t.Fatalf("the attempts of first: %+v", attempts)
	}
	var evs []store.Event
	decode(t, a.do(store.ScopeRead, "GET", "/v1/records/events?after=0", "").want(t, http.StatusOK).body, &evs)
	if len(evs) == 0 || evs[0].RunID != id {
		t.Fatalf("the events: %+v", evs)
	}
	last := evs[len(evs)-1].ID
	var heads []store.Version
	decode(t, a.do(store.ScopeRead, "GET", "/v1/records/versions?workflow=rec", "").want(t, http.StatusOK).body, &heads)
	if len(heads) != 1 || heads[0].Hash != run.GraphHash {
		t.Fatalf("the version heads: %+v", heads)
	}
	g, err := graph.Decode(a.do(store.ScopeRead, "GET", "/v1/records/graphs/rec/"+run.GraphHash, "").want(t, http.StatusOK).body)
	if err != nil || len(g.Steps) != 2 {
		t.Fatalf("the stored graph: %v", err)
	}
	a.do(store.ScopeRead, "GET", "/v1/records/graphs/rec/nope", "").problem(t, http.StatusNotFound)
	a.do(store.ScopeRead, "GET", "/v1/records/runs/"+id+"/attempts", "").problem(t, http.StatusBadRequest, "step")
	a.do(store.ScopeRead, "GET", "/v1/records/events?limit=0", "").problem(t, http.StatusBadRequest, "limit")
	a.do(store.ScopeRead, "GET", "/v1/records/events?wait=1h", "").problem(t, http.StatusBadRequest, "wait")
	a.do("", "GET", "/v1/records/runs", "").want(t, http.StatusUnauthorized)

	// Nothing after the last event: a wait answers [] when it has passed.
	if b := a.do(store.ScopeRead, "GET", fmt.Sprintf("/v1/records/events?after=%d&wait=100ms", last), "").want(t, http.StatusOK).body; string(b) != "[]\n" && string(b) != "[]" {
		t.Fatalf("a wait with nothing new answered %s", b)
	}
	// A wait answers at the commit that appends an event: the signal's.
	got := make(chan answer, 1)
	go func() { // joined by the receive below
		got <- a.do(store.ScopeRead, "GET", fmt.Sprintf("/v1/records/events?after=%d&wait=30s", last), "")
	}()
	a.do(store.ScopeWrite, "POST", "/v1/runs/"+id+"/signals/go", `{}`).want(t, http.StatusAccepted)
	ans := <-got
	ans.want(t, http.StatusOK)
	var after []store.Event
	if err := json.Unmarshal(ans.body, &after); err != nil || len(after) == 0 || after[0].ID <= last || after[0].Kind != "signal_received" {
		t.Fatalf("the wait answered %s (%v)", ans.body, err)
	}

	var plan struct {
		Run  store.Run `json:"run"`
		Bump string    `json:"bump"`
	}
	body = a.do(store.ScopeRead, "GET", "/v1/runs/"+id+"/decision/plan", "").want(t, http.StatusOK).body
	if strings.Contains(string(body), serverDir) {
		t.Fatalf("the decision plan's run shows the server's directory (api.md §12 leaves work_dir empty): %s", body)
	}
	decode(t, body, &plan)
	if plan.Run.ID != id || plan.Bump != "none" || plan.Run.WorkDir != "" {
		t.Fatalf("the decision plan: %+v", plan)
	}
}
