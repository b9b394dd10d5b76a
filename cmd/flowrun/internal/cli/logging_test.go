package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// TestLogEventJSON: an event's line carries run_id, event, step and
// attempt, its level follows the kind, and its time is the engine clock's.
func TestLogEventJSON(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	lf := addLogFlags(fs)
	if err := fs.Parse([]string{"--log-format", "json", "--log-level", "info"}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	var buf bytes.Buffer
	log, err := lf.logger(&buf, clock.NewFake(at))
	if err != nil {
		t.Fatal(err)
	}
	logEvent(log, store.Event{RunID: "R1", Kind: "step_failed", StepKey: "build[2]", Data: json.RawMessage(`{"kind":"exec","message":"boom","attempts":3}`)})
	logEvent(log, store.Event{RunID: "R1", Kind: "claimed", Data: json.RawMessage(`{"owner":"h/1/w1","epoch":2}`)}) // debug: left out
	logEvent(log, store.Event{RunID: "R1", Kind: "run_completed"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (the claim is debug):\n%s", len(lines), buf.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"time": "2031-05-06T07:08:09Z", "level": "WARN", "msg": "step build[2] failed: boom",
		"run_id": "R1", "event": "step_failed", "step": "build[2]", "attempt": 3.0}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, first[k], v, lines[0])
		}
	}
	if strings.Contains(lines[1], `"step"`) || !strings.Contains(lines[1], `"event":"run_completed"`) {
		t.Errorf("run line: %s", lines[1])
	}
}

// TestLogEventAlertFailedWarns: a failed try of an alert's delivery is a
// warning (the receiver is down: someone should look), a sent one is info.
func TestLogEventAlertFailedWarns(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	lf := addLogFlags(fs)
	if err := fs.Parse([]string{"--log-format", "json", "--log-level", "info"}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log, err := lf.logger(&buf, clock.NewFake(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	logEvent(log, store.Event{RunID: "R1", Kind: "alert_failed", StepKey: "boom",
		Data: json.RawMessage(`{"alert":"ops","event":"failed","delivery":1,"attempt":1,"message":"POST http://x/ returned status 500"}`)})
	logEvent(log, store.Event{RunID: "R1", Kind: "alert_sent", StepKey: "boom",
		Data: json.RawMessage(`{"alert":"ops","event":"failed","delivery":1,"attempt":2}`)})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{`"level":"WARN"`, `"level":"INFO"`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], `"attempt":`+strconv.Itoa(i+1)) {
			t.Errorf("line %d: %s, want %s and its attempt", i+1, lines[i], want)
		}
	}
}
