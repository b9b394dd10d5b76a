package step

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestStepView(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(t0.Add(time.Minute)))
	m := New(disp, keys.Default())
	m.SetSize(80, 60)
	var out strings.Builder
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&out, "line %d\n", i)
	}
	errJSON, _ := json.Marshal(map[string]any{"kind": "exec", "message": "command \"build\" exited with status 2: boom",
		"exit_code": 2, "output": map[string]any{"stdout": out.String(), "stderr": "warming up\nboom\n"}})
	m.Open("RUN1", "build")
	m.SetDetail(&feed.RunDetail{Run: store.Run{ID: "RUN1"},
		Steps: []store.Step{{Key: "build", Step: "build", Index: -1, Iteration: -1, Status: store.StepFailed, Attempts: 2,
			StartedAt: t0, FinishedAt: t0.Add(3 * time.Second), Error: errJSON}},
		Events: []store.Event{
			{ID: 1, RunID: "RUN1", At: t0, Kind: "step_started", StepKey: "build", Data: json.RawMessage(`{"attempt":1}`)},
			{ID: 2, RunID: "RUN1", At: t0, Kind: "step_started", StepKey: "other"},
			{ID: 3, RunID: "RUN1", At: t0, Kind: "step_failed", StepKey: "build"},
		}})
	m.SetAttempts([]store.Attempt{
		{StepKey: "build", Attempt: 1, Status: store.AttemptFailed, StartedAt: t0, FinishedAt: t0.Add(time.Second), Error: errJSON},
		{StepKey: "build", Attempt: 2, Status: store.AttemptFailed, StartedAt: t0.Add(2 * time.Second), FinishedAt: t0.Add(3 * time.Second), Error: errJSON},
	})
	v := m.View()
	for _, want := range []string{"step build", "✗ failed", "2 attempt(s) · took 3s", "#2 ✗ failed · 1s · exec: command",
		"STDOUT (last 10 lines)", "line 15", "STDERR", "boom", "EVENTS (2)", `step_started {"attempt":1}`} {
		if !strings.Contains(v, want) {
			t.Errorf("step view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "line 5\n") || strings.Contains(v, "step_started other") {
		t.Errorf("step view shows more than the tail, or another step's events:\n%s", v)
	}
}

// hostile is what a program may write to mislead a person: it erases the
// line and returns the cursor, so that on a terminal "fake" reads "all
// good".
const hostile = "fake\x1b[2K\rall good"

// noRawControls fails when view holds a control character other than a
// newline, or a bidi override: the views are drawn without colour here, so
// any ESC came from stored text.
func noRawControls(t *testing.T, view string) {
	t.Helper()
	for _, r := range view {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u202e') {
			t.Fatalf("the view holds a raw %U:\n%q", r, view)
		}
	}
}

func TestStepViewEscapesProgramText(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(t0.Add(time.Minute)))
	m := New(disp, keys.Default())
	m.SetSize(120, 60)
	errJSON, _ := json.Marshal(map[string]any{"kind": "exec", "message": `command "sh" exited with status 4: ` + hostile,
		"exit_code": 4, "output": map[string]any{
			"stdout": "\x1b]0;pwned\a\x1b[31mred\x1b[0m\ncol1\tcol2\n\u202eevil\n",
			"stderr": hostile,
		}})
	m.Open("RUN1", "boom")
	m.SetDetail(&feed.RunDetail{Run: store.Run{ID: "RUN1"},
		Steps: []store.Step{{Key: "boom", Step: "boom", Index: -1, Iteration: -1, Status: store.StepFailed, Attempts: 1,
			StartedAt: t0, FinishedAt: t0.Add(time.Second), Error: errJSON}},
		Events: []store.Event{{ID: 1, RunID: "RUN1", At: t0, Kind: "step_failed", StepKey: "boom",
			Data: json.RawMessage(`{"error":{"message":"\u001b[2Kforged"}}`)}}})
	m.SetAttempts([]store.Attempt{{StepKey: "boom", Attempt: 1, Status: store.AttemptFailed, StartedAt: t0,
		FinishedAt: t0.Add(time.Second), Error: errJSON}})
	v := m.View()
	var trimmed []string // the pane pads its lines to its width
	for _, l := range strings.Split(v, "\n") {
		trimmed = append(trimmed, strings.TrimRight(l, " "))
	}
	text := strings.Join(trimmed, "\n")
	for _, want := range []string{
		`#1 ✗ failed · 1s · exec: command "sh" exited with status 4: fake\x1b[2K\rall good`, // the attempt
		"STDERR (last 10 lines)\n" + `fake\x1b[2K\rall good`,                                // the tail of stderr
		`\x1b]0;pwned\a\x1b[31mred\x1b[0m` + "\n" + `col1\tcol2` + "\n" + `\u202eevil`,      // stdout, line by line
		`"stderr": "fake\u001b[2K\rall good"`,                                               // the error as JSON
	} {
		if !strings.Contains(text, want) {
			t.Errorf("step view lacks %q:\n%s", want, text)
		}
	}
	noRawControls(t, v)
}
