package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
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
		"error", "parent", "trace_id", "attempt", "created_at", "started_at", "finished_at", "deadline_at", "available_at", "revision", "step_order", "steps")
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
	common := []string{"status", "attempts", "output", "error", "started_at", "finished_at", "wake_at", "detail"}
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

// TestRunViewJSON: the hand-written JSON of a view is the form of
// semantics.md §16, field for field, for every kind of step, with step
// names in sorted order and nothing HTML-escaped.
func TestRunViewJSON(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600))
	v := &RunView{RunID: "R", Workflow: "w", Version: "1.0.0", Key: "k", Status: store.RunFailed,
		Inputs: json.RawMessage(`{"q": "<a&b>"}`), Error: json.RawMessage(`{"kind":"exec"}`), Attempt: 2,
		RunTimes: RunTimes{CreatedAt: &at, FinishedAt: &at}, WaitReason: "signal:go", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
		Steps: map[string]*StepView{
			"zeta":  {Status: store.StepCompleted, Attempts: 1, Output: json.RawMessage(`{"html":"<b>","u":"é\u2028"}`), StartedAt: &at},
			"alpha": {Status: store.StepPending, Output: json.RawMessage("null")},
			"loop":  {Status: store.StepCompleted, Attempts: 3, until: true, Iterations: 3, ChildRunID: "C"},
			"each":  {Status: store.StepRunning, foreach: true},
			"items": {Status: store.StepCompleted, foreach: true, Items: []ItemView{{Index: 0, Item: json.RawMessage(`"<i>"`), Status: store.StepFailed, Attempts: 2, Error: json.RawMessage(`{"kind":"exec"}`)}}},
			"quote": {Status: store.StepFailed, Error: json.RawMessage(`{"message":"say \"hi\""}`)},
			"pet":   {Status: store.StepPending, Output: json.RawMessage("null"), OpenAPI: &graph.OpenAPIRef{Document: "https://x.test/a&b.yaml", SHA256: "ab12", Operation: "showPetById"}},
		}}
	raw, err := marshalNoHTML(v) // as the CLI writes it
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(`\u003c`)) || bytes.Contains(raw, []byte(`\u0026`)) {
		t.Errorf("the JSON escapes HTML: %s", raw)
	}
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	step := func(status string, attempts int, output, errv any, started any) map[string]any {
		return map[string]any{"status": status, "attempts": float64(attempts), "output": output, "error": errv,
			"started_at": started, "finished_at": nil, "wake_at": nil, "detail": nil}
	}
	ts := "2025-01-02T02:04:05.006Z"
	loop := step("completed", 3, nil, nil, nil)
	loop["iterations"], loop["child_run_id"] = float64(3), "C"
	each := step("running", 0, nil, nil, nil)
	each["items"] = []any{}
	items := step("completed", 0, nil, nil, nil)
	pet := step("pending", 0, nil, nil, nil)
	pet["openapi"] = map[string]any{"document": "https://x.test/a&b.yaml", "sha256": "ab12", "operation": "showPetById"}
	items["items"] = []any{map[string]any{"index": float64(0), "item": "<i>", "status": "failed", "attempts": float64(2), "output": nil, "error": map[string]any{"kind": "exec"}}}
	want := map[string]any{
		"run_id": "R", "workflow": "w", "version": "1.0.0", "key": "k", "status": "failed", "wait_reason": nil,
		"inputs": map[string]any{"q": "<a&b>"}, "outputs": nil, "error": map[string]any{"kind": "exec"}, "parent": nil,
		"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
		"attempt":  float64(2), "created_at": ts, "started_at": nil, "finished_at": ts, "deadline_at": nil,
		"available_at": nil, "revision": nil, "step_order": []any{},
		"steps": map[string]any{
			"zeta":  step("completed", 1, map[string]any{"html": "<b>", "u": "é\u2028"}, nil, ts),
			"alpha": step("pending", 0, nil, nil, nil),
			"loop":  loop,
			"each":  each,
			"items": items,
			"quote": step("failed", 0, nil, map[string]any{"message": `say "hi"`}, nil),
			"pet":   pet,
		},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("JSON of the view:\n%s\nwant:\n%s", g, w)
	}
	// Keys in sorted order, as encoding/json writes maps.
	names := []string{`"alpha":`, `"each":`, `"items":{`, `"loop":`, `"quote":`, `"zeta":`}
	last := -1
	for _, n := range names {
		i := bytes.Index(raw, []byte(n))
		if i <= last {
			t.Errorf("step %s is at %d, after the previous one at %d: %s", n, i, last, raw)
		}
		last = i
	}
}

// itemReads counts what a view reads of a run's step rows.
type itemReads struct {
	store.Store
	lists, itemRows int
}

func (c *itemReads) StepList(ctx context.Context, runID string) ([]store.Step, error) {
	c.lists++
	return c.Store.StepList(ctx, runID)
}

func (c *itemReads) StepItems(ctx context.Context, p store.StepItemsParams) ([]store.Step, error) {
	rows, err := c.Store.StepItems(ctx, p)
	c.itemRows += len(rows)
	return rows, err
}

// TestShowFoldedReadsTotals: ShowFolded of a failed run with a foreach of
// many items gives each status's count, the step's attempts and the first
// failed items (each as Show has it, item value included) that Show's
// items fold into, the items never started counted canceled; it reads
// the items' totals and the failed rows it lists, never the whole list.
func TestShowFoldedReadsTotals(t *testing.T) {
	b := setup(t, func(o *Options) {
		o.Mock = func(c MockCall) (MockResult, bool) {
			if c.Probe {
				return MockResult{}, true
			}
			_, idx, _, _ := store.ParseStepKey(c.StepKey)
			if idx >= 3 && idx < 8 {
				return MockResult{Error: &MockError{Kind: "exec", Message: fmt.Sprintf("item %d broke", idx)}}, true
			}
			return MockResult{Output: map[string]any{"i": idx}}, true
		}
	})
	gs := b.compile(`
workflow "many" {
  version = "1.0.0"
  input "items" { type = list(string) }
  step "first" {
    set { v = 1 }
  }
  step "each" {
    depends_on = [step.first]
    foreach {
      items       = "input.items"
      concurrency = 8
    }
    exec { command = ["work", "{{ item }}"] }
  }
}`)
	items := make([]any, 300)
	for i := range items {
		items[i] = fmt.Sprintf("it-%d", i)
	}
	run := b.start(gs[0].Workflow, map[string]any{"items": items})
	wantStatus(t, b.drive(run.ID), store.RunFailed)

	full := b.show(run.ID)
	want := full.Steps["each"].Folded(2)
	// Items 3 to 7 fail; the first failure cancels the others in flight,
	// so how many end failed depends on the scheduling (at least one).
	if want == nil || want.Counts[store.StepFailed] < 1 || want.Total() >= len(items) {
		t.Fatalf("the run did not fail as the test needs (a failed item, some never begun): %+v", want)
	}
	listed := min(2, want.Counts[store.StepFailed])
	t.Logf("Show folds to %v, %d failed listed", want.Counts, len(want.Failed))
	// The items never begun have no row: neither view counts them.
	rc := &itemReads{Store: b.st}
	v, err := New(rc, b.e.opts).ShowFolded(b.ctx, run.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := v.Steps["each"]
	if got.Fold == nil || len(got.Items) != 0 {
		t.Fatalf("ShowFolded gave items %d and fold %v, want a fold only", len(got.Items), got.Fold)
	}
	if !reflect.DeepEqual(got.Folded(2), want) {
		t.Errorf("ShowFolded's fold = %+v,\nShow's items fold to %+v", got.Folded(2), want)
	}
	if got.Attempts != full.Steps["each"].Attempts || got.Status != store.StepFailed {
		t.Errorf("ShowFolded's step: %s, %d attempts; Show's: %s, %d", got.Status, got.Attempts, full.Steps["each"].Status, full.Steps["each"].Attempts)
	}
	if string(got.Fold.Failed[0].Item) != `"it-`+fmt.Sprint(got.Fold.Failed[0].Index)+`"` {
		t.Errorf("the first failed item's value = %s", got.Fold.Failed[0].Item)
	}
	if f := got.Folded(1); len(f.Failed) != 1 || len(got.Fold.Failed) != listed {
		t.Errorf("Folded(1) gave %d failed items (the fold holds %d)", len(f.Failed), len(got.Fold.Failed))
	}
	if first := v.Steps["first"]; first.Status != store.StepCompleted || first.Fold != nil || string(first.Output) != `{"v":1}` {
		t.Errorf("the step without items: %+v", first)
	}
	if rc.lists != 0 || rc.itemRows != listed {
		t.Errorf("ShowFolded read %d whole step lists and %d item rows, want none and the %d failed items it lists", rc.lists, rc.itemRows, listed)
	}
	// Show's items and ShowFolded's counts say the same of a canceled run's
	// items that had not settled.
	if want.Counts[store.StepPending] != 0 || got.Fold.Counts[store.StepPending] != 0 {
		t.Errorf("a failed run's view counts pending items: %v, %v", want.Counts, got.Fold.Counts)
	}
}
