package cli

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// TestWaitWords: a waiting run parked on a signal says the signal came
// only when it is due and its wait has not timed out; due because the
// wait's timeout passed, it says so.
func TestWaitWords(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Hour)
	waiting := func(wake *time.Time) map[string]*interp.StepView {
		return map[string]*interp.StepView{"ask": {Status: store.StepWaiting, Detail: "signal go", WakeAt: wake}}
	}
	for _, c := range []struct {
		name      string
		available *time.Time
		steps     map[string]*interp.StepView
		want      string
	}{
		{"not due", &future, waiting(&future), "signal:go"},
		{"signal came, no timeout", &past, waiting(nil), "signal go received, due"},
		{"signal came before the timeout", &past, waiting(&future), "signal go received, due"},
		{"timed out", &past, waiting(&past), "signal go timed out, due"},
	} {
		v := &interp.RunView{Status: store.RunWaiting, WaitReason: "signal:go", Steps: c.steps}
		v.AvailableAt = c.available
		if got := waitWords(v, now); got != c.want {
			t.Errorf("%s: waitWords = %q, want %q", c.name, got, c.want)
		}
	}
}
