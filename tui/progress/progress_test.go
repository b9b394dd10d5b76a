package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

// settle runs cmd and the commands that follow, as the program would;
// ticks (which wait on the clock) are left out.
func settle(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case nil, tea.QuitMsg:
			continue
		case tea.BatchMsg:
			queue = append(queue, msg...)
			continue
		}
		next, more := m.Update(msg)
		m = next.(Model)
		queue = append(queue, more)
	}
	return m
}

func TestFollowsRun(t *testing.T) {
	b := fixture.New(t)
	b.StoreHCL(t, fixture.Approve)
	run := b.Drive(t, b.Start(t, "approve", map[string]any{"id": "A"}).ID)
	b.Clock.Advance(3 * time.Second)

	disp := display.New(&bytes.Buffer{}, true, b.Clock)
	bg, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(bg, feed.Local(b.Engine, ""), disp, run.ID)
	m.noTicks = true
	m = settle(t, m, m.first())
	v := m.View()
	for _, want := range []string{"approve 1.0.0", "waiting", "◷ approval", "signal approval", "1/3 steps"} {
		if !strings.Contains(v, want) {
			t.Errorf("live view lacks %q:\n%s", want, v)
		}
	}

	// The run goes on; a tick's poll picks it up incrementally.
	if _, err := b.Engine.Signal(context.Background(), run.ID, "approval", nil); err != nil {
		t.Fatal(err)
	}
	b.Drive(t, run.ID)
	m = settle(t, m, func() tea.Msg { return tickMsg{} })
	m = settle(t, m, func() tea.Msg { return FinishMsg{} })
	v = m.View()
	if !m.done || !strings.Contains(v, "✓ approve") || !strings.Contains(v, "3/3 steps") || strings.Contains(v, "◷ approval") {
		t.Fatalf("final view:\n%s", v)
	}
}

func TestRunReturnsWhenCanceled(t *testing.T) {
	b := fixture.New(t)
	b.StoreHCL(t, fixture.Approve)
	run := b.Drive(t, b.Start(t, "approve", map[string]any{"id": "A"}).ID)
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Engine: b.Engine, RunID: run.ID, Out: &out, NoColor: true, Clock: b.Clock})
	}()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a safety net only
		t.Fatal("Run did not return after its context ended")
	}
	if !strings.Contains(out.String(), "approve 1.0.0") {
		t.Fatalf("output lacks the run:\n%q", out.String())
	}
}

// TestViewEscapesStoredText: apply's live view draws stored text (a
// workflow's name, a wait reason, a step's detail, a store error) with its
// control characters escaped; an erase-line and carriage return would
// rewrite the line it is drawn on.
func TestViewEscapesStoredText(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(fixture.T0.Add(5*time.Second)))
	disp.Width = 200
	m := Model{disp: disp, runID: "RUN1", d: &feed.RunDetail{
		Run: store.Run{ID: "RUN1", Workflow: "w", Status: store.RunWaiting, WaitReason: "signal:go\x1b[2K\rdone",
			StartedAt: fixture.T0},
		Steps: []store.Step{{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepWaiting,
			StartedAt: fixture.T0, Detail: "fake\x1b[2K\rall good \u202eevil"}},
		Bound: "1.0.0"}}
	m.notice = "stop\x1b[1A"
	v := m.View()
	for _, want := range []string{`waiting on signal:go\x1b[2K\rdone`, `fake\x1b[2K\rall good \u202eevil`, `stop\x1b[1A`} {
		if !strings.Contains(v, want) {
			t.Errorf("live view lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\r\u202e") {
		t.Errorf("live view holds raw control characters:\n%q", v)
	}
}

// TestViewShowsOutputTail: under a running step the view shows the last
// TailLines lines its program wrote (read from the store as they are
// stored, items named by their key, stderr marked), escaped; a step that
// is not running shows none.
func TestViewShowsOutputTail(t *testing.T) {
	b := fixture.New(t)
	b.StoreHCL(t, fixture.Approve)
	run := b.Start(t, "approve", map[string]any{"id": "A"})
	var cs []store.OutputChunkWrite
	for i, text := range []string{"one\n", "two\n", "three\n", "four \x1b[2Kfake\n"} {
		cs = append(cs, store.OutputChunkWrite{StepKey: "build", Attempt: 1, Stream: store.StreamStdout, Chunk: i, At: fixture.T0, Data: []byte(text)})
	}
	cs = append(cs, store.OutputChunkWrite{StepKey: "each[2]", Attempt: 1, Stream: store.StreamStderr, Chunk: 0, At: fixture.T0, Data: []byte("item says\n")},
		store.OutputChunkWrite{StepKey: "done", Attempt: 1, Stream: store.StreamStdout, Chunk: 0, At: fixture.T0, Data: []byte("finished step\n")})
	if err := b.Engine.Store().StepOutputAppend(context.Background(), run.ID, cs); err != nil {
		t.Fatal(err)
	}
	disp := display.New(&bytes.Buffer{}, true, b.Clock)
	disp.Width = 120
	bg, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(bg, feed.Local(b.Engine, ""), disp, run.ID)
	m.noTicks = true
	m = settle(t, m, m.first())
	m.d.Steps = []store.Step{
		{Key: "build", Step: "build", Index: -1, Iteration: -1, Status: store.StepRunning, StartedAt: fixture.T0},
		{Key: "each", Step: "each", Index: -1, Iteration: -1, Status: store.StepRunning, StartedAt: fixture.T0},
		{Key: "done", Step: "done", Index: -1, Iteration: -1, Status: store.StepCompleted, StartedAt: fixture.T0},
	}
	v := m.View()
	for _, want := range []string{"    │ two\n", "    │ three\n", `    │ four \x1b[2Kfake` + "\n", "    │ each[2] stderr item says\n"} {
		if !strings.Contains(v, want) {
			t.Errorf("live view lacks %q:\n%s", want, v)
		}
	}
	for _, not := range []string{"│ one", "finished step", "\x1b"} {
		if strings.Contains(v, not) {
			t.Errorf("live view holds %q:\n%s", not, v)
		}
	}
}

// TestViewForeachAndRetries: a foreach step shows its items done over all
// its items (12 recorded, 6 started), and a step or item waiting to retry
// shows the error behind the retry.
func TestViewForeachAndRetries(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(fixture.T0.Add(5*time.Second)))
	disp.Width = 200
	items := `{"items":["b-00","b-01","b-02","b-03","b-04","b-05","b-06","b-07","b-08","b-09","b-10","b-11"]}`
	steps := []store.Step{
		{Key: "batch", Step: "batch", Index: -1, Iteration: -1, Status: store.StepRunning, StartedAt: fixture.T0, State: json.RawMessage(items)},
		{Key: "call", Step: "call", Index: -1, Iteration: -1, Status: store.StepWaiting, Attempts: 1, StartedAt: fixture.T0,
			Detail: "retry 2/3", WakeAt: fixture.T0.Add(9 * time.Second), Error: json.RawMessage(`{"kind":"http","message":"GET http://x/ answered 503"}`)},
	}
	for i := range 6 {
		s := store.Step{Key: store.StepKey("batch", i, -1), Step: "batch", Index: i, Iteration: -1, Status: store.StepCompleted, Attempts: 1}
		switch i {
		case 3:
			s.Status, s.Error = store.StepFailed, json.RawMessage(`{"kind":"exec","message":"exit 1"}`)
		case 4:
			s.Status, s.Detail = store.StepWaiting, "retry 2/3"
			s.Error = json.RawMessage(`{"kind":"exec","message":"command \"./load\" exited with status 75: busy"}`)
		case 5:
			s.Status = store.StepRunning
		}
		steps = append(steps, s)
	}
	m := Model{disp: disp, runID: "RUN1", d: &feed.RunDetail{
		Run:   store.Run{ID: "RUN1", Workflow: "w", Status: store.RunRunning, StartedAt: fixture.T0, Inputs: json.RawMessage(`{}`)},
		Steps: steps, Bound: "1.0.0"}}
	v := m.View()
	for _, want := range []string{
		"batch                running · items 4/12, 1 failed",
		"      item 4 retry 2/3 · last error: exec: command \"./load\" exited with status 75: busy",
		"call                 waiting · ",
		"      last error: http: GET http://x/ answered 503",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("live view lacks %q:\n%s", want, v)
		}
	}
}

// TestFailedRunBarNotFull: a failed run whose steps all settled (one
// completed, one failed, one canceled) draws a bar of the completed one
// only, with the failed and canceled counted beside it: a full bar would
// read as done.
func TestFailedRunBarNotFull(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, false, clock.NewFake(fixture.T0.Add(5*time.Second)))
	disp.Width = 100
	step := func(name string, st store.StepStatus) store.Step {
		return store.Step{Key: name, Step: name, Index: -1, Iteration: -1, Status: st, StartedAt: fixture.T0}
	}
	m := Model{disp: disp, runID: "RUN1", d: &feed.RunDetail{
		Run: store.Run{ID: "RUN1", Workflow: "w", Status: store.RunFailed, StartedAt: fixture.T0},
		Steps: []store.Step{step("a", store.StepCompleted), step("b", store.StepFailed), step("c", store.StepCanceled),
			// A saga's rows are not steps of the graph (store.GraphStep).
			step("~compensate", store.StepCompleted), step("a~compensate", store.StepFailed)},
		Bound: "1.0.0"}}
	v := m.View()
	if !strings.Contains(v, " 1/3 steps, 2 failed or canceled") {
		t.Fatalf("the bar's count:\n%s", v)
	}
	if !strings.Contains(v, "░") {
		t.Fatalf("a failed run's bar is full:\n%s", v)
	}
}
