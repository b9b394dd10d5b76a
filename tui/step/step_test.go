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
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestStepView(t *testing.T) {
	ctx := theme.NewContext(&bytes.Buffer{}, true, clock.NewFake(t0.Add(time.Minute)))
	m := New(ctx, keys.Default)
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
