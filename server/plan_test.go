package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

const planV1 = `
workflow "ship" {
  version = "1.0.0"
  step "a" {
    set { x = "1" }
  }
}`

// planBody is the body of POST /v1/versions/plan of one file.
func planBody(t *testing.T, src string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"files": []map[string]string{{"name": "ship.hcl", "source": src}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlanRoute: POST /v1/versions/plan with a read token answers the
// version check of a deploy (a new MINOR against the stored graph, a
// PATCH the changes refuse) and stores nothing; without a token it is
// refused; a file that does not compile is a 422 with its diagnostics.
func TestPlanRoute(t *testing.T) {
	a := newAPI(t)
	a.apply(planV1)
	minor := strings.Replace(strings.Replace(planV1, `"1.0.0"`, `"1.1.0"`, 1), "step \"a\" {", "step \"b\" {\n    set { y = \"2\" }\n  }\n  step \"a\" {", 1)
	var res struct {
		Workflows []struct {
			Workflow    string          `json:"workflow"`
			NewestGraph json.RawMessage `json:"newest_graph"`
			Check       struct {
				Newest  *struct{ Version string } `json:"newest"`
				Changes []struct{ Path, Bump string }
				Refused *struct{ Kind, Reason, Required string }
			} `json:"check"`
		} `json:"workflows"`
	}
	decode(t, a.do(store.ScopeRead, http.MethodPost, "/v1/versions/plan", planBody(t, minor)).want(t, http.StatusOK).body, &res)
	if len(res.Workflows) != 1 || res.Workflows[0].Workflow != "ship" {
		t.Fatalf("workflows %+v, want ship", res.Workflows)
	}
	w := res.Workflows[0]
	if w.Check.Newest == nil || w.Check.Newest.Version != "1.0.0" || w.Check.Refused != nil || len(w.NewestGraph) == 0 {
		t.Fatalf("check %+v (graph %d bytes), want against 1.0.0, not refused, with the stored graph", w.Check, len(w.NewestGraph))
	}
	patch := strings.Replace(minor, `"1.1.0"`, `"1.0.1"`, 1)
	decode(t, a.do(store.ScopeRead, http.MethodPost, "/v1/versions/plan", planBody(t, patch)).want(t, http.StatusOK).body, &res)
	if r := res.Workflows[0].Check.Refused; r == nil || r.Kind != "bump" || r.Reason != "too_small" || r.Required != "minor" {
		t.Fatalf("refused %+v, want a bump too small (minor needed)", r)
	}
	vs, err := a.st.VersionList(a.ctx, "ship")
	if err != nil || len(vs) != 1 {
		t.Fatalf("stored versions %v (%v), want 1.0.0 only: a plan stores nothing", vs, err)
	}
	a.do("", http.MethodPost, "/v1/versions/plan", planBody(t, minor)).problem(t, http.StatusUnauthorized)
	// A file that does not compile: the diagnostics, text and themselves.
	bad := a.do(store.ScopeRead, http.MethodPost, "/v1/versions/plan", planBody(t, `workflow "x" {`)).problem(t, http.StatusUnprocessableEntity, "error")
	var pj struct {
		Deploy struct {
			Hint  string
			Diags []struct {
				Severity string
				Subject  *struct{ Filename string }
			}
		}
	}
	decode(t, mustJSON(t, bad), &pj)
	if d := pj.Deploy.Diags; len(d) != 1 || d[0].Severity != "error" || d[0].Subject == nil || d[0].Subject.Filename != "ship.hcl" || !strings.Contains(pj.Deploy.Hint, "plan again") {
		t.Fatalf("deploy member %+v, want the diagnostic at ship.hcl and the hint to plan again", pj.Deploy)
	}
	a.do(store.ScopeRead, http.MethodPost, "/v1/versions/plan", `{"files": []}`).problem(t, http.StatusBadRequest, "the plan holds no files")
}

// TestVersionGraphRoute: the stored graph of a version by its name, 404
// for a version not stored, 400 for one that is not MAJOR.MINOR.PATCH.
func TestVersionGraphRoute(t *testing.T) {
	a := newAPI(t)
	a.apply(planV1)
	m := a.do(store.ScopeRead, http.MethodGet, "/v1/workflows/ship/versions/1.0.0/graph", "").want(t, http.StatusOK).json(t)
	if m["workflow"] != "ship" || m["version"] != "1.0.0" {
		t.Fatalf("graph %v, want ship 1.0.0", m)
	}
	// A version not stored is a sentence, as the CLI's diff says it, with
	// the way to list the stored versions.
	p := a.do(store.ScopeRead, http.MethodGet, "/v1/workflows/ship/versions/2.0.0/graph", "").problem(t, http.StatusNotFound, `version 2.0.0 of workflow "ship" is not stored`)
	if h, _ := p["hint"].(string); !strings.Contains(h, "/v1/workflows/ship/versions") || !strings.Contains(h, "flowrun versions ship") {
		t.Fatalf("hint %q, want the ways to list the stored versions", h)
	}
	a.do(store.ScopeRead, http.MethodGet, "/v1/workflows/nope/versions/1.0.0/graph", "").problem(t, http.StatusNotFound, `version 1.0.0 of workflow "nope" is not stored`)
	a.do(store.ScopeRead, http.MethodGet, "/v1/workflows/ship/versions/two/graph", "").problem(t, http.StatusBadRequest)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
