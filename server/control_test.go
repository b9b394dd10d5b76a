package server

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/interp"

	"github.com/flowrun/flowrun/store"
)

const shipV1 = `
workflow "ship" {
  version = "1.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    depends_on = [step.ask]
    set { text = "v1 {{ steps.ask.output.who }}" }
  }
}
`

const shipV2 = `
workflow "ship" {
  version = "2.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    depends_on = [step.ask]
    set { text = "v2 {{ steps.ask.output.who }}" }
  }
  step "pack" {
    depends_on = [step.label]
    set { done = true }
  }
}
`

const failing = `
workflow "flaky" {
  version = "1.0.0"
  step "boom" {
    fail { message = "boom" }
  }
}
`

// drive runs a run here until it ends or parks (no worker in these tests).
func (a *testAPI) drive(id string) store.Run {
	a.t.Helper()
	run, err := a.eng.Drive(a.ctx, id)
	if err != nil {
		a.t.Fatalf("drive %s: %v", id, err)
	}
	return run
}

func (a *testAPI) start(workflow, body string) string {
	a.t.Helper()
	r := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/"+workflow+"/runs", body).want(a.t, http.StatusCreated).json(a.t)
	return r["run_id"].(string)
}

func TestSignal(t *testing.T) {
	a := newAPI(t)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	if run := a.drive(id); run.Status != store.RunWaiting {
		t.Fatalf("run %s, want waiting", run.Status)
	}
	// An unknown signal: 404 naming the one the run waits for.
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/og", `{}`).problem(t, http.StatusNotFound, `signal "og"`, `Did you mean "go"?`)
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{"who": `).problem(t, http.StatusBadRequest, "not valid JSON")
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/NOPE/signals/go", `{}`).problem(t, http.StatusNotFound, `"NOPE"`)
	if sigs, _ := a.st.SignalList(a.ctx, id, false); len(sigs) != 0 {
		t.Fatalf("refused signals were stored: %v", sigs)
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{"who": "api"}`).want(t, http.StatusAccepted)
	run := a.drive(id)
	if run.Status != store.RunCompleted {
		t.Fatalf("run %s after the signal, want completed", run.Status)
	}
	got := a.do(store.ScopeRead, http.MethodGet, "/v1/runs/"+id, "").want(t, http.StatusOK).json(t)
	label := got["steps"].(map[string]any)["label"].(map[string]any)["output"].(map[string]any)
	if label["text"] != "v1 api" {
		t.Fatalf("label output %v", label)
	}
	// A finished run waits for nothing: 409.
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{}`).problem(t, http.StatusConflict, "completed")
}

func TestCancelAndRetry(t *testing.T) {
	a := newAPI(t)
	a.apply(failing)
	a.apply(shipV1)
	id := a.start("flaky", `{}`)
	if run := a.drive(id); run.Status != store.RunFailed {
		t.Fatalf("run %s, want failed", run.Status)
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/retry", `{"from": "bom"}`).problem(t, http.StatusNotFound, `no step "bom"`)
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/retry", `{"form": "boom"}`).problem(t, http.StatusBadRequest, `unknown field "form"`)
	// null is no object: nothing is retried (api.md §3).
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/retry", `null`).problem(t, http.StatusBadRequest, "is null, not a JSON object", `"from"`)
	if run, _ := a.st.RunGet(a.ctx, id); run.Status != store.RunFailed {
		t.Fatalf("a null retry left the run %s, want failed", run.Status)
	}
	r := a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/retry", `{"from": "boom"}`).want(t, http.StatusAccepted).json(t)
	if r["status"] != "pending" || r["attempt"] != float64(2) {
		t.Fatalf("retry answered %v %v", r["status"], r["attempt"])
	}
	// Retrying a run that did not fail: 409.
	w := a.start("ship", `{"inputs": {"order": "B"}}`)
	// It names the run, which a worker of the server goes on with, not a
	// resume, which runs nothing through a server.
	p := a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+w+"/retry", `{}`).problem(t, http.StatusConflict, "only a failed or canceled run can be retried")
	if h, _ := p["hint"].(string); p["continue"] != w || !strings.Contains(h, "GET /v1/runs/"+w+"/events") || strings.Contains(h, "resume") {
		t.Fatalf("the refused retry's continue %v, hint %q", p["continue"], h)
	}
	c := a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+w+"/cancel", ``).want(t, http.StatusAccepted).json(t)
	if c["status"] != "canceled" {
		t.Fatalf("cancel of an idle run answered %v", c["status"])
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+w+"/cancel", `{"now": true}`).problem(t, http.StatusBadRequest, `unknown field "now"`, "this request takes no fields: send {} or no body")
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+w+"/cancel", `null`).problem(t, http.StatusBadRequest, "is null, not a JSON object; send {} or no body")
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+w+"/cancel", ``).problem(t, http.StatusConflict, "")
}

func TestDecision(t *testing.T) {
	a := newAPI(t)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	a.apply(shipV2)
	// A run that ended takes no decision: 409 saying why.
	other := a.start("ship", `{"inputs": {"order": "Z"}}`)
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+other+"/cancel", ``).want(t, http.StatusAccepted)
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+other+"/decision", `{"choose": "old"}`).problem(t, http.StatusConflict, "takes no version decision")
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{"who": "api"}`).want(t, http.StatusAccepted)
	if run := a.drive(id); run.Status != store.RunBlocked {
		t.Fatalf("run %s after a new MAJOR, want blocked", run.Status)
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/decision", `{"choose": "newest"}`).problem(t, http.StatusBadRequest, `"newest" is not a version decision`)
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/decision", `{}`).problem(t, http.StatusBadRequest, `"" is not a version decision`)
	d := a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/decision", `{"choose": "migrate"}`).want(t, http.StatusOK).json(t)
	if d["run_id"] != id || d["version"] != "2.0.0" || d["status"] != "pending" {
		t.Fatalf("migrate answered %v %v %v", d["run_id"], d["version"], d["status"])
	}
	if dec, _ := d["decision"].(map[string]any); dec["choice"] != "migrate" || dec["from"] != "1.0.0" || dec["to"] != "2.0.0" {
		t.Fatalf("migrate answered the decision %v", d["decision"])
	}
	// Deciding again: 409 naming the decision taken.
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/decision", `{"choose": "old"}`).problem(t, http.StatusConflict, "already decided")
	run := a.drive(id)
	if run.Status != store.RunCompleted || run.Version != "2.0.0" {
		t.Fatalf("migrated run %s on %s", run.Status, run.Version)
	}
	evs, _ := a.st.EventList(a.ctx, store.EventListParams{RunID: id})
	found := false
	for _, ev := range evs {
		found = found || ev.Kind == "version_decided" && strings.Contains(string(ev.Data), `"by":"api token write-token"`)
	}
	if !found {
		t.Fatalf("no version_decided event by the API's token")
	}
}

// TestStartWait: with "wait" a start answers once the run ended or
// parked (a worker runs it), or when the wait passed.
func TestStartWait(t *testing.T) {
	a := newAPI(t, realClock)
	a.apply(helloHCL)
	a.apply(shipV1)
	// No worker yet: the wait passes and the run is answered pending.
	r := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/hello/runs", `{"inputs": {"name": "a"}, "wait": "50ms"}`).want(t, http.StatusCreated).json(t)
	if r["status"] != "pending" {
		t.Fatalf("without a worker, after the wait: %v", r["status"])
	}
	w := interp.NewWorker(a.eng, interp.WorkerOptions{Concurrency: 2})
	if err := w.Start(a.ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(a.ctx)
	r = a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/hello/runs", `{"inputs": {"name": "b"}, "wait": "30s"}`).want(t, http.StatusCreated).json(t)
	if r["status"] != "completed" || r["outputs"].(map[string]any)["text"] != "Hello, b!" {
		t.Fatalf("with a worker: %v %v", r["status"], r["outputs"])
	}
	r = a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/ship/runs", `{"inputs": {"order": "W"}, "wait": "30s"}`).want(t, http.StatusCreated).json(t)
	if r["status"] != "waiting" || r["wait_reason"] != "signal:go" {
		t.Fatalf("a run that parks: %v %v", r["status"], r["wait_reason"])
	}
	// A graceful stop ends a wait: the run is answered as it is.
	if err := w.Stop(a.ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { // ends with the request
		req, _ := http.NewRequest(http.MethodPost, a.hs.URL+"/v1/workflows/hello/runs", strings.NewReader(`{"inputs": {"name": "c"}, "wait": "5m"}`))
		req.Header.Set("Authorization", "Bearer "+a.tokens[store.ScopeWrite])
		req.Header.Set("Content-Type", "application/json")
		resp, err := a.hs.Client().Do(req)
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- strconv.Itoa(resp.StatusCode) + " " + string(b)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		runs, err := a.st.RunList(a.ctx, store.RunListParams{Workflow: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third start did not store its run within 10s")
		}
	}
	a.srv.CloseStreams()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "201 ") || !strings.Contains(got, `"status":"pending"`) {
			t.Fatalf("a wait ended by a stop answered %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stop did not end the wait within 10s")
	}
}
