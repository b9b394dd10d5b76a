package interp

import (
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestAlertTriesReachOnEvent: the event that records an alert delivery's
// try (alert_sent, alert_failed) is told to OnEvent like a commit's
// events, with its run and step, so a worker logs it and apply shows it.
// Before, only the store had it: a worker's log never said that an alert
// went out or that its receiver failed.
func TestAlertTriesReachOnEvent(t *testing.T) {
	var mu sync.Mutex
	var got []store.Event
	b := setup(t, func(o *Options) {
		o.OnEvent = func(ev store.Event) {
			if strings.HasPrefix(ev.Kind, "alert_") {
				mu.Lock()
				got = append(got, ev)
				mu.Unlock()
			}
		}
	})
	run := b.run(`
workflow "al" {
  version = "1.0.0"
  alert "ok" {
    on = ["failed"]
    exec { command = ["true"] }
  }
  alert "down" {
    on = ["failed"]
    exec { command = ["false"] }
  }
  step "boom" {
    fail { message = "no" }
  }
}
`, nil)
	wantStatus(t, run, store.RunFailed)
	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	for _, ev := range got {
		if ev.RunID != run.ID || ev.StepKey != "boom" {
			t.Errorf("event %s: run %q step %q, want run %q step boom", ev.Kind, ev.RunID, ev.StepKey, run.ID)
		}
		kinds = append(kinds, ev.Kind+":"+string(jsonOf(t, ev.Data).(map[string]any)["alert"].(string)))
	}
	if g := strings.Join(kinds, " "); g != "alert_failed:down alert_sent:ok" {
		t.Fatalf("alert events told to OnEvent: %q, want \"alert_failed:down alert_sent:ok\"", g)
	}
}
