package server

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

const hookHCL = `workflow "deploy" {
  version = "1.0.0"
  input "ref" { type = string }
  input "n" {
    type    = number
    default = 0
  }
  key = "input.ref"
  secret "hook_key" { env = "HOOK_KEY" }
  webhook "push" {
    secret = secret.hook_key
    inputs = { ref = "{{ body.ref }}" }
    key    = "body.after"
  }
  webhook "unset" {
    secret = secret.other
    inputs = { ref = "{{ body.ref }}" }
  }
  secret "other" { env = "OTHER_KEY" }
  step "s" {
    set { ref = "{{ input.ref }}" }
  }
}`

const hookSecret = "hook-secret-value"

// newHookAPI is newAPI whose engine reads HOOK_KEY (and nothing else) from
// its environment, with maxBody as the server's body limit (0: default).
func newHookAPI(t *testing.T, maxBody int64) *testAPI {
	t.Helper()
	a := newAPI(t)
	a.eng = interp.New(a.st, interp.Options{
		Clock: a.clk, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "t"},
		Rand: rand.New(rand.NewPCG(1, 2)), ParkWait: -1,
		Getenv: func(k string) string {
			if k == "HOOK_KEY" {
				return hookSecret
			}
			return ""
		},
	})
	a.srv = New(Options{Engine: a.eng, Clock: a.clk, MaxBody: maxBody})
	a.hs = httptest.NewServer(a.srv)
	t.Cleanup(a.hs.Close)
	t.Cleanup(a.srv.CloseStreams)
	a.apply(hookHCL)
	return a
}

// hook posts body to a webhook with the signature sig ("" for none) and
// the extra header pairs.
func (a *testAPI) hook(path, body, sig string, header ...string) answer {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.ctx, http.MethodPost, a.hs.URL+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return a.send(req)
}

func (a *testAPI) runCount() int {
	a.t.Helper()
	runs, err := a.st.RunList(a.ctx, store.RunListParams{})
	if err != nil {
		a.t.Fatal(err)
	}
	return len(runs)
}

func sign(body string) string { return interp.Sign([]byte(hookSecret), []byte(body)) }

// TestWebhookRoute: a signed request starts a run (201, Location, the run
// as show --json prints it); a bad or missing signature is 401 and writes
// nothing; a redelivery (delivery id or key) answers 200 with the same run.
func TestWebhookRoute(t *testing.T) {
	a := newHookAPI(t, 0)
	body := `{"ref":"main","after":"c0ffee"}`
	r := a.hook("/hooks/deploy/push", body, sign(body), "X-GitHub-Delivery", "d-1").want(t, http.StatusCreated)
	run := r.json(t)
	id, _ := run["run_id"].(string)
	if id == "" || run["key"] != "c0ffee" || r.header.Get("Location") != "/v1/runs/"+id {
		t.Fatalf("answer %s (Location %q), want the new run with key c0ffee", r.body, r.header.Get("Location"))
	}
	if in, _ := run["inputs"].(map[string]any); in["ref"] != "main" {
		t.Fatalf("inputs %v, want ref main", run["inputs"])
	}

	a.hook("/hooks/deploy/push", `{"ref":"evil","after":"x"}`, sign(body)).problem(t, http.StatusUnauthorized, "does not match the body")
	a.hook("/hooks/deploy/push", body, "").problem(t, http.StatusUnauthorized, "no X-Hub-Signature-256 header")
	a.hook("/hooks/deploy/push", body, "sha1=abc").problem(t, http.StatusUnauthorized, "sha256=")
	if n := a.runCount(); n != 1 {
		t.Fatalf("%d runs after refused requests, want 1", n)
	}

	// a redelivery by id (even of another body), and by key
	other := `{"ref":"main","after":"0ther"}`
	again := a.hook("/hooks/deploy/push", other, sign(other), "X-GitHub-Delivery", "d-1").want(t, http.StatusOK).json(t)
	byKey := a.hook("/hooks/deploy/push", body, sign(body), "X-GitHub-Delivery", "d-2").want(t, http.StatusOK).json(t)
	if again["run_id"] != id || byKey["run_id"] != id {
		t.Fatalf("redeliveries answered runs %v and %v, want %s", again["run_id"], byKey["run_id"], id)
	}
	if n := a.runCount(); n != 1 {
		t.Fatalf("%d runs after redeliveries, want 1", n)
	}
}

// TestWebhookRouteRefusals: the other refusals of a webhook request, none
// of which writes anything, and none of which names what else is stored.
func TestWebhookRouteRefusals(t *testing.T) {
	a := newHookAPI(t, 256)
	big := `{"ref":"` + strings.Repeat("x", 300) + `","after":"a"}`
	a.hook("/hooks/deploy/push", big, sign(big)).problem(t, http.StatusRequestEntityTooLarge, "larger than 256 bytes")
	p := a.hook("/hooks/deploy/psuh", `{}`, sign(`{}`)).problem(t, http.StatusNotFound, `no webhook "psuh" of workflow "deploy"`)
	if strings.Contains(p["detail"].(string), `"push"`) {
		t.Errorf("a 404 without a token names the stored webhook: %v", p["detail"])
	}
	a.hook("/hooks/nope/push", `{}`, sign(`{}`)).problem(t, http.StatusNotFound, `no webhook "push" of workflow "nope"`)
	p = a.hook("/hooks/deploy/unset", `{}`, sign(`{}`)).problem(t, http.StatusServiceUnavailable, "secret is not set")
	if strings.Contains(p["detail"].(string), "OTHER_KEY") {
		t.Errorf("the answer names the server's environment variable: %v", p["detail"])
	}
	a.hook("/hooks/deploy/push", `{"ref":`, sign(`{"ref":`)).problem(t, http.StatusBadRequest, "not JSON")
	// The input whose value failed is the problem's field (api.md §10),
	// whether its expression fails or its value does not fit.
	p = a.hook("/hooks/deploy/push", `{"after":"a"}`, sign(`{"after":"a"}`)).problem(t, http.StatusUnprocessableEntity, "inputs failed", "body.ref")
	if p["field"] != "ref" {
		t.Errorf("field %v, want the input ref", p["field"])
	}
	p = a.hook("/hooks/deploy/push", `{"ref":5,"after":"a"}`, sign(`{"ref":5,"after":"a"}`)).problem(t, http.StatusUnprocessableEntity, `"ref"`)
	if p["field"] != "ref" {
		t.Errorf("field %v, want the input ref", p["field"])
	}
	a.hook("/hooks/deploy/push", `{"ref":"a"}`, sign(`{"ref":"a"}`)).problem(t, http.StatusUnprocessableEntity, "key")
	if n := a.runCount(); n != 0 {
		t.Fatalf("%d runs after refused requests, want 0", n)
	}
}

// TestBatchRoute: a batch starts its runs in item order (201); an item
// whose key names an unfinished run reports it; one bad item rejects the
// batch naming its index, and nothing is written.
func TestBatchRoute(t *testing.T) {
	a := newHookAPI(t, 0)
	first := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/deploy/runs", `{"inputs":{"ref":"r0"}}`).want(t, http.StatusCreated).json(t)
	r := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/deploy/runs/batch",
		`{"runs":[{"inputs":{"ref":"r0"}},{"inputs":{"ref":"r1","n":1}},{"inputs":{"ref":"r2"}}]}`).want(t, http.StatusCreated).json(t)
	runs, _ := r["runs"].([]any)
	if len(runs) != 3 {
		t.Fatalf("answer %v, want 3 runs", r)
	}
	for i, x := range runs {
		m := x.(map[string]any)
		wantNew := i > 0
		if m["key"] != []string{"r0", "r1", "r2"}[i] || m["created"] != wantNew || m["status"] != "pending" {
			t.Errorf("runs[%d] = %v", i, m)
		}
	}
	if runs[0].(map[string]any)["run_id"] != first["run_id"] {
		t.Errorf("runs[0] = %v, want the run started before, %v", runs[0], first["run_id"])
	}
	if n := a.runCount(); n != 3 {
		t.Fatalf("%d runs, want 3", n)
	}
	// the same batch again creates nothing: 200
	a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/deploy/runs/batch",
		`{"runs":[{"inputs":{"ref":"r0"}},{"inputs":{"ref":"r1"}}]}`).want(t, http.StatusOK)

	for _, tc := range []struct {
		name, body string
		status     int
		field      string
		parts      []string
	}{
		{"wrong type", `{"runs":[{"inputs":{"ref":"a"}},{"inputs":{"ref":"b"}},{"inputs":{"ref":"c"}},{"inputs":{"ref":"d","n":"many"}}]}`,
			http.StatusUnprocessableEntity, "runs[3].inputs.n", []string{"runs[3]:", `"n"`, "nothing of the batch was written"}},
		{"unknown input", `{"runs":[{"inputs":{"ref":"a","nn":1}}]}`, http.StatusUnprocessableEntity, "runs[0].inputs.nn", []string{"runs[0]:", `"nn"`}},
		{"missing input", `{"runs":[{"inputs":{"ref":"a"}},{"inputs":{}}]}`, http.StatusUnprocessableEntity, "runs[1]", []string{"runs[1]:", `"ref"`}},
		{"unknown field", `{"runs":[{"inputs":{"ref":"a"}},{"input":{"ref":"b"}}]}`, http.StatusBadRequest, "runs[1]", []string{"runs[1]:", `"input"`}},
		{"not an object", `{"runs":[{"inputs":{"ref":"a"}},[1]]}`, http.StatusBadRequest, "runs[1]", []string{"runs[1]:", "a list"}},
		{"null item", `{"runs":[{"inputs":{"ref":"a"}},null]}`, http.StatusBadRequest, "runs[1]", []string{"runs[1]:", "null, not an object"}},
		{"same key twice", `{"runs":[{"inputs":{"ref":"a"}},{"inputs":{"ref":"a"}}]}`, http.StatusBadRequest, "runs[1]", []string{"runs[1]:", "key of runs[0]"}},
		{"key in use", `{"runs":[{"inputs":{"ref":"z"}},{"inputs":{"ref":"r1","n":5}}]}`, http.StatusConflict, "runs[1]", []string{"runs[1]:", "still pending"}},
		{"empty", `{"runs":[]}`, http.StatusBadRequest, "runs", []string{"no run"}},
		{"unknown batch field", `{"run":[]}`, http.StatusBadRequest, "run", []string{`"run"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/deploy/runs/batch", tc.body).problem(t, tc.status, tc.parts...)
			if p["field"] != tc.field {
				t.Errorf("field %v, want %q", p["field"], tc.field)
			}
			if n := a.runCount(); n != 3 {
				t.Fatalf("%d runs after a refused batch, want 3", n)
			}
		})
	}
	a.do("", http.MethodPost, "/v1/workflows/deploy/runs/batch", `{"runs":[{"inputs":{"ref":"q"}}]}`).problem(t, http.StatusUnauthorized, "no token")
	a.do(store.ScopeRead, http.MethodPost, "/v1/workflows/deploy/runs/batch", `{"runs":[{"inputs":{"ref":"q"}}]}`).problem(t, http.StatusForbidden, "needs scope write")
	a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/nope/runs/batch", `{"runs":[{"inputs":{"ref":"q"}}]}`).want(t, http.StatusNotFound)
}
