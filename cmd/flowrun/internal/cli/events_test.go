package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestDescribeEvent: the words of an event are its kind and step, then
// the known fields of its data (alert, attempt, wake_at, reason), then its
// error's message or its message, first line only; fields of another
// type, and data that is not an object, are left out.
func TestDescribeEvent(t *testing.T) {
	wake := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		kind, step, data, want string
	}{
		{"step_started", "charge", `{"attempt":1}`, "step charge started (attempt 1)"},
		{"step_completed", "charge", `{}`, "step charge completed"},
		{"step_completed", "charge", ``, "step charge completed"},
		{"run_completed", "", `null`, "run completed"},
		{"run_failed", "charge", `{"error":{"message":"exit status 1\nmore"}}`, "run failed at step charge: exit status 1 …"},
		{"step_failed", "charge", `{"attempt":2,"error":{"kind":"exec","message":"boom"}}`, "step charge failed (attempt 2): boom"},
		{"step_failed", "charge", `{"error":"not an object","message":"said"}`, "step charge failed: said"},
		{"step_failed", "charge", `{"error":{"kind":"x"},"message":"fallback"}`, "step charge failed: fallback"},
		{"step_retrying", "charge", `{"attempt":1,"wake_at":"` + wake.Format(time.RFC3339Nano) + `","message":"busy"}`,
			"step charge retrying (attempt 1, until " + wake.Local().Format("15:04:05") + "): busy"},
		{"step_canceled", "a", `{"reason":"the run was canceled"}`, "step a canceled (the run was canceled)"},
		{"run_parked", "", `{"reason":"stopped","available_at":"x"}`, "run parked (stopped)"},
		{"alert_sent", "charge", `{"alert":"pager","event":"step_failed","attempt":1}`, "step charge alert sent (alert pager on step_failed, attempt 1)"},
		// A failed delivery says when it is tried again, or that it was the last try.
		{"alert_failed", "charge", `{"alert":"pager","event":"failed","attempt":1,"message":"POST x returned status 500","retry_at":"` + wake.Format(time.RFC3339Nano) + `"}`,
			"step charge alert failed (alert pager on failed, attempt 1, next try at " + wake.Local().Format("15:04:05") + "): POST x returned status 500"},
		{"alert_failed", "charge", `{"alert":"pager","event":"failed","attempt":5,"message":"refused","final":true}`,
			"step charge alert failed (alert pager on failed, attempt 5, the last try): refused"},
		{"step_started", "a", `{"attempt":"one","reason":"r"}`, "step a started (r)"},
		{"step_started", "a", `[1,2]`, "step a started"},
		{"step_failed", "a", `{"message":"\u001b[31mred"}`, "step a failed: \\x1b[31mred"},
	}
	for _, tt := range tests {
		ev := store.Event{Kind: tt.kind, StepKey: tt.step, Data: json.RawMessage(tt.data)}
		if got := describeEvent(ev); got != tt.want {
			t.Errorf("describeEvent(%s %s %s) = %q, want %q", tt.kind, tt.step, tt.data, got, tt.want)
		}
	}
}

// TestProgressLineAllocs: a progress line, printed for every event of a
// run, decodes only the fields it shows and formats without fmt.
func TestProgressLineAllocs(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out}
	ev := store.Event{Kind: "step_started", StepKey: "s41", RunID: "r1", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Data: json.RawMessage(`{"attempt":1}`)}
	p.event(ev)
	want := "[" + ev.At.Local().Format("15:04:05") + "] step s41 started (attempt 1)\n"
	if out.String() != want {
		t.Fatalf("line %q, want %q", out.String(), want)
	}
	if n := testing.AllocsPerRun(100, func() { out.Reset(); p.event(ev) }); n > 6 {
		t.Errorf("a progress line allocates %v times, want at most 6", n)
	}
}
