package interp

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"testing"
)

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func wantKeys(t *testing.T, what string, v any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keysOf(t, v); !slices.Equal(got, want) {
		t.Errorf("%s fields = %v, want %v", what, got, want)
	}
}

// TestShowJSONShape checks the show --json form of semantics.md §16: every
// documented field present (null when empty), parent {run_id, step},
// attempt, child_run_id, items with their item, iterations of until steps,
// and times in UTC with milliseconds.
func TestShowJSONShape(t *testing.T) {
	b := setup(t)
	gs := b.compile(`
workflow "parent" {
  version  = "1.0.0"
  deadline = "1h"
  step "each" {
    foreach { items = "['a', 'b']" }
    set { v = "{{ item }}" }
  }
  step "again" {
    until          = "iteration >= 1"
    max_iterations = 3
    set { n = 1 }
  }
  step "kid" {
    workflow {
      name    = "child"
      version = "1"
    }
  }
}
workflow "child" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}
`)
	run := b.start(gs[0].Workflow, nil)
	b.drive(run.ID)

	var doc map[string]any
	raw, err := json.Marshal(b.show(run.ID))
	if err != nil {
		t.Fatalf("marshal the parent's view: %v", err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	wantKeys(t, "run", doc, "run_id", "workflow", "version", "key", "status", "wait_reason", "inputs", "outputs",
		"error", "parent", "attempt", "created_at", "started_at", "finished_at", "deadline_at", "steps")
	if doc["status"] != "waiting" || doc["wait_reason"] != "child" || doc["parent"] != nil || doc["attempt"] != 1.0 ||
		doc["error"] != nil || doc["finished_at"] != nil {
		t.Errorf("parent run = %s", raw)
	}
	ms := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	for _, f := range []string{"created_at", "started_at", "deadline_at"} {
		if s, _ := doc[f].(string); !ms.MatchString(s) {
			t.Errorf("%s = %v, want an RFC 3339 UTC time with milliseconds", f, doc[f])
		}
	}
	steps := doc["steps"].(map[string]any)
	common := []string{"status", "attempts", "output", "error", "started_at", "finished_at", "wake_at"}
	wantKeys(t, "foreach step", steps["each"], append(common, "items")...)
	items := steps["each"].(map[string]any)["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("items = %v, want 2", items)
	}
	wantKeys(t, "item", items[1], "index", "item", "status", "attempts", "output", "error")
	if it := items[1].(map[string]any); it["item"] != "b" || it["index"] != 1.0 || it["error"] != nil {
		t.Errorf("item 1 = %v", it)
	}
	wantKeys(t, "until step", steps["again"], append(common, "iterations")...)
	if n := steps["again"].(map[string]any)["iterations"]; n != 2.0 {
		t.Errorf("iterations = %v, want 2", n)
	}
	wantKeys(t, "workflow step", steps["kid"], append(common, "child_run_id")...)
	childID, _ := steps["kid"].(map[string]any)["child_run_id"].(string)
	if childID == "" {
		t.Fatalf("the workflow step shows no child_run_id: %s", raw)
	}

	raw, err = json.Marshal(b.show(childID))
	if err != nil {
		t.Fatalf("marshal the child's view: %v", err)
	}
	var child map[string]any
	if err := json.Unmarshal(raw, &child); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if p, _ := child["parent"].(map[string]any); p == nil || p["run_id"] != run.ID || p["step"] != "kid" {
		t.Errorf("child parent = %v, want {run_id: %s, step: kid}", child["parent"], run.ID)
	}
	if child["wait_reason"] != "signal:go" {
		t.Errorf("child wait_reason = %v, want signal:go", child["wait_reason"])
	}
	wantKeys(t, "wait step", child["steps"].(map[string]any)["ask"], common...)
}
