package interp

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// rawStepOutput is the output column of a step row as stored, read past
// the store's methods.
func rawStepOutput(t *testing.T, b *bundle, runID, key string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+b.st.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out sql.NullString
	if err := db.QueryRowContext(b.ctx, `SELECT output FROM steps WHERE run_id = ?1 AND key = ?2`, runID, key).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out.String
}

const feOutputWorkflow = `
workflow "fe" {
  version = "1.0.0"
  input "items" { type = list(number) }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 2
      on_failure  = "continue"
    }
    set { v = "{{ 12 / item }}" }
  }
  %s
}`

// The item 0 fails (a division by zero) and is null in the output.
var feOutputWant = []any{nil, map[string]any{"v": 12.0}, map[string]any{"v": 6.0}, map[string]any{"v": 4.0}, map[string]any{"v": 3.0}}

// TestForeachUnreadOutputFromItems: a foreach whose output nothing reads
// is written with store.ItemOutputs (the runner never built the list), and
// every read of the step (show, StepList, StepGet) returns the list of its
// items' outputs, null for the item that failed. Fails on the old code:
// the row held the list the runner had built.
func TestForeachUnreadOutputFromItems(t *testing.T) {
	b := setup(t)
	b.compile(fmt.Sprintf(feOutputWorkflow, ""))
	run := b.start("fe", map[string]any{"items": []any{0, 1, 2, 3, 4}})
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
	if got := rawStepOutput(t, b, run.ID, "each"); got != store.ItemOutputsText {
		t.Fatalf("the stored output of the unread foreach is %q, want store.ItemOutputs", got)
	}
	if got := jsonOf(t, b.show(run.ID).Steps["each"].Output); !reflect.DeepEqual(got, feOutputWant) {
		t.Fatalf("show: output = %v, want %v", got, feOutputWant)
	}
	row, err := b.st.StepGet(b.ctx, run.ID, "each")
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, row.Output); !reflect.DeepEqual(got, feOutputWant) {
		t.Fatalf("StepGet: output = %s, want %v", row.Output, feOutputWant)
	}
	if !json.Valid(row.Output) || row.Output[0] != '[' {
		t.Fatalf("StepGet: output %s is not a JSON list", row.Output)
	}
	steps, err := b.st.StepList(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.Key == "each" && !reflect.DeepEqual(jsonOf(t, s.Output), feOutputWant) {
			t.Fatalf("StepList: output = %s, want %v", s.Output, feOutputWant)
		}
	}
}

// TestForeachReadOutputBuilt: a foreach whose output a workflow output
// reads is built by the runner and stored as the list itself.
func TestForeachReadOutputBuilt(t *testing.T) {
	b := setup(t)
	b.compile(fmt.Sprintf(feOutputWorkflow, `output "all" { value = "{{ steps.each.output }}" }`))
	run := b.start("fe", map[string]any{"items": []any{0, 1, 2, 3, 4}})
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	if got := jsonOf(t, json.RawMessage(rawStepOutput(t, b, run.ID, "each"))); !reflect.DeepEqual(got, feOutputWant) {
		t.Fatalf("the stored output of the read foreach is %v, want %v", got, feOutputWant)
	}
	outs, _ := jsonOf(t, done.Outputs).(map[string]any)
	if !reflect.DeepEqual(outs["all"], feOutputWant) {
		t.Fatalf("the run's output all = %v, want %v", outs["all"], feOutputWant)
	}
}
