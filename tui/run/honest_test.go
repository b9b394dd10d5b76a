package run

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// A foreach's progress counts every item it evaluated, not only those
// started: 2 of 6 done while 3 have started reads "items 2/6" (issue 24:
// it read "items 2/3").
func TestForeachProgressCountsAllItems(t *testing.T) {
	m := newView(t0.Add(30 * time.Second))
	d := detail(store.RunRunning)
	for i := range d.Steps {
		if d.Steps[i].Key == "label" {
			d.Steps[i].State = json.RawMessage(`{"items":["a","b","c","d","e","f"]}`)
		}
	}
	m.SetDetail(d)
	if v := m.View(); !strings.Contains(v, "items 2/6, 1 failed") {
		t.Fatalf("the foreach does not read done/total of all items:\n%s", v)
	}
}

// A canceled run's steps that never started read canceled, as `flowrun
// show` says, not pending (issue 24: "load pending" on a canceled run).
func TestCanceledRunStepsReadCanceled(t *testing.T) {
	m := newView(t0.Add(30 * time.Second))
	m.SetDetail(detail(store.RunCanceled))
	v := m.View()
	if strings.Contains(v, "pending") {
		t.Fatalf("a canceled run shows a pending step:\n%s", v)
	}
	if !strings.Contains(v, "ship") || !strings.Contains(v, "⊘ ship") && !strings.Contains(v, "ship                  canceled") {
		t.Fatalf("the never-started step ship does not read canceled:\n%s", v)
	}
}
