package interp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// TestRunViewJSONRoundTrip: a view read back from its JSON form is the
// same view: marshaled again it is the same text, and the fields the
// human view prints (order, revision, due time, details, schedule) are
// kept.
func TestRunViewJSONRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 5, 8, 0, 0, 123e6, time.UTC)
	later := at.Add(1500 * time.Millisecond)
	v := &RunView{RunID: "01JD3Q9W7V9X1Y2Z3A4B5C6D7E", Workflow: "w", Version: "0.1.0", Key: "k\x1b", Status: store.RunWaiting,
		WaitReason: "signal:approve", Inputs: json.RawMessage(`{"id":9223372036854775807}`), Outputs: json.RawMessage("null"),
		Error: json.RawMessage("null"), Attempt: 2, ParentRunID: "P", ParentStep: "s[1]", TraceID: "abc",
		Revision: 2, Current: 3, Order: []string{"b", "a", "c"},
		Schedule: &store.ScheduleFire{Workflow: "w", Schedule: "nightly", Slot: at, Reason: "manual", Status: store.FireFired, RunID: "01JD3Q9W7V9X1Y2Z3A4B5C6D7E"},
		RunTimes: RunTimes{CreatedAt: &at, StartedAt: &at, AvailableAt: &later},
		Steps: map[string]*StepView{
			"b": {Status: store.StepCompleted, Attempts: 1, Output: json.RawMessage(`{"n":1.5e300}`), StartedAt: &at, FinishedAt: &later},
			"a": {Status: store.StepWaiting, Output: json.RawMessage("null"), Detail: "signal approve", WakeAt: &later},
			"c": {Status: store.StepRunning, Attempts: 3, Output: json.RawMessage("null"), foreach: true,
				Items: []ItemView{{Index: 0, Item: json.RawMessage(`"x"`), Status: store.StepFailed, Attempts: 3,
					Output: json.RawMessage("null"), Error: json.RawMessage(`{"kind":"exec","message":"m"}`)}}},
			"d": {Status: store.StepCompleted, Output: json.RawMessage("null"), until: true, Iterations: 4, ChildRunID: "C"},
			"e": {Status: store.StepPending, Output: json.RawMessage("null"), foreach: true},
			"f": {Status: store.StepCompleted, Attempts: 1, Output: json.RawMessage(`{"status":200}`),
				OpenAPI: &graph.OpenAPIRef{Document: "petstore.yaml", SHA256: "0a1b", Operation: "listPets"}},
		}}
	want, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back RunView
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("marshaled again:\n%s\nwant\n%s", got, want)
	}
	if back.Revision != 2 || back.Current != 3 || back.AvailableAt == nil || !back.AvailableAt.Equal(later) ||
		len(back.Order) != 3 || back.Order[0] != "b" || back.Steps["a"].Detail != "signal approve" ||
		back.Schedule == nil || back.Schedule.Reason != "manual" || back.WaitReason != "signal:approve" ||
		back.Steps["f"].OpenAPI == nil || *back.Steps["f"].OpenAPI != *v.Steps["f"].OpenAPI || back.Steps["a"].OpenAPI != nil {
		t.Fatalf("fields lost: %+v", back)
	}
	if err := json.Unmarshal([]byte(`{"run_id":"x"}`), &back); err == nil {
		t.Fatal("a view without steps was read")
	}
}
