package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newView(now time.Time) Model {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(now))
	m := New(disp, keys.Default())
	m.SetSize(80, 20)
	return m
}

// detail is a run of a diamond: fetch → (charge, label) → approval → ship,
// with a retry countdown, a foreach and a signal wait.
func detail(status store.RunStatus) *feed.RunDetail {
	g := &graph.Graph{Workflow: "order", Version: "2.1.0", Steps: []*graph.Step{
		{Name: "fetch", Action: graph.Action{Kind: graph.KindHTTP}},
		{Name: "charge", Needs: []string{"fetch"}, Action: graph.Action{Kind: graph.KindExec}},
		{Name: "label", Needs: []string{"fetch"}, Action: graph.Action{Kind: graph.KindExec}},
		{Name: "approval", Needs: []string{"charge", "label"}, Action: graph.Action{Kind: graph.KindWait, Wait: &graph.WaitAction{Signal: "approval"}}},
		{Name: "ship", Needs: []string{"approval"}, Action: graph.Action{Kind: graph.KindExec}},
	}}
	steps := []store.Step{
		{Key: "fetch", Step: "fetch", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, StartedAt: t0, FinishedAt: t0.Add(1200 * time.Millisecond)},
		{Key: "charge", Step: "charge", Index: -1, Iteration: -1, Status: store.StepWaiting, Attempts: 2, StartedAt: t0.Add(2 * time.Second),
			WakeAt: t0.Add(40 * time.Second), Detail: "retry 3/4", Error: json.RawMessage(`{"kind":"exec","message":"exit status 1"}`)},
		{Key: "label", Step: "label", Index: -1, Iteration: -1, Status: store.StepRunning, Attempts: 1, StartedAt: t0.Add(2 * time.Second)},
		{Key: "label[0]", Step: "label", Index: 0, Iteration: -1, Status: store.StepCompleted, Attempts: 1},
		{Key: "label[1]", Step: "label", Index: 1, Iteration: -1, Status: store.StepFailed, Attempts: 3},
		{Key: "label[2]", Step: "label", Index: 2, Iteration: -1, Status: store.StepRunning, Attempts: 1},
	}
	return &feed.RunDetail{Run: store.Run{ID: "01RUNAAAAAAAAAAAAAAAAAAAAA", Workflow: "order", Version: "2.1.0", Key: "A-1",
		Status: status, CreatedAt: t0, StartedAt: t0, WaitReason: "retry"}, Graph: g, Steps: steps, Bound: "2.1.0"}
}

func TestRunViewGolden(t *testing.T) {
	m := newView(t0.Add(30 * time.Second))
	m.SetDetail(detail(store.RunRunning))
	v := m.View()
	for _, want := range []string{"version 2.1.0 (bound)", "retry 3/4 · in 10s", "items 2/3, 1 failed", "    · approval", "      · ship"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	golden.RequireEqual(t, []byte(v))
}

func TestBlockedBanner(t *testing.T) {
	m := newView(t0)
	m.SetDetail(detail(store.RunBlocked))
	if v := m.View(); !strings.Contains(v, "BLOCKED") || !strings.Contains(v, "press d to choose old, new or migrate") {
		t.Fatalf("no banner on a blocked run:\n%s", v)
	}
	m.SetDetail(detail(store.RunRunning))
	if strings.Contains(m.View(), "BLOCKED") {
		t.Fatal("banner on a running run")
	}
}

func TestCursorAndOpen(t *testing.T) {
	m := newView(t0)
	m.SetDetail(detail(store.RunRunning))
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
	m.SetDetail(detail(store.RunRunning)) // a poll keeps the cursor
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	msg, ok := cmd().(OpenStepMsg)
	if !ok || msg.StepKey != "label" {
		t.Fatalf("enter opened %#v, want step label", msg)
	}
	if got := m.WaitingSignals(); len(got) != 1 || got[0] != "approval" {
		t.Fatalf("waiting signals %v", got)
	}
}

// bigDetail is a run of a 5,000-step chain-of-fans graph, half done.
func bigDetail(n int) *feed.RunDetail {
	g := &graph.Graph{Workflow: "big", Version: "1.0.0"}
	var steps []store.Step
	for i := 0; i < n; i++ {
		s := &graph.Step{Name: fmt.Sprintf("s%04d", i), Action: graph.Action{Kind: graph.KindExec}}
		if i > 0 {
			s.Needs = []string{fmt.Sprintf("s%04d", (i-1)/2)}
		}
		g.Steps = append(g.Steps, s)
		if i < n/2 {
			steps = append(steps, store.Step{Key: s.Name, Step: s.Name, Index: -1, Iteration: -1, Status: store.StepCompleted,
				Attempts: 1, StartedAt: t0, FinishedAt: t0.Add(time.Second)})
		}
	}
	return &feed.RunDetail{Run: store.Run{ID: "01BIG", Workflow: "big", Version: "1.0.0", Status: store.RunRunning, CreatedAt: t0},
		Graph: g, Steps: steps, Bound: "1.0.0"}
}

// BenchmarkUpdateView5000Steps is one poll's worth of work on an open
// 5,000-step run: the re-read run applied, then a frame drawn.
func BenchmarkUpdateView5000Steps(b *testing.B) {
	m := newView(t0)
	m.SetSize(80, 20)
	d := bigDetail(5000)
	m.SetDetail(d)
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Steps[i%len(d.Steps)].Attempts++
		m.SetDetail(d)
		_ = m.View()
	}
}

// TestRunViewEscapesStoredText: a run whose key and error hold what a
// program or caller wrote (an erase-line and carriage return that make
// "fake" read "all good", a right-to-left override) is drawn with those
// characters escaped, never raw.
func TestRunViewEscapesStoredText(t *testing.T) {
	d := detail(store.RunFailed)
	d.Run.Key = "A-1\x1b[2K\r\u202eevil"
	d.Run.FinishedAt = t0.Add(10 * time.Second)
	d.Run.Error = json.RawMessage(`{"kind":"exec","message":"command \"sh\" exited with status 4: fake\u001b[2K\rall good","step":"charge"}`)
	d.Steps[1].Status = store.StepFailed
	d.Steps[1].Error = d.Run.Error
	d.Steps[1].FinishedAt = t0.Add(4 * time.Second)
	d.Steps[2].Detail = "\x1b[31mretry\x1b[0m"
	m := newView(t0.Add(30 * time.Second))
	m.SetSize(140, 20)
	m.SetDetail(d)
	v := m.View()
	for _, want := range []string{
		`key A-1\x1b[2K\r\u202eevil`,
		`error: exec: command "sh" exited with status 4: fake\x1b[2K\rall good`,
		`failed · attempt 2 · 2s · exec: command "sh" exited with status 4: fake\x1b[2K\rall good`,
		`\x1b[31mretry\x1b[0m`,
	} {
		if !strings.Contains(v, want) {
			t.Errorf("run view lacks %q:\n%s", want, v)
		}
	}
	for _, r := range v {
		if r != '\n' && (r < 0x20 || r == 0x7f || r == '\u202e') {
			t.Fatalf("the run view holds a raw %U:\n%q", r, v)
		}
	}
	golden.RequireEqual(t, []byte(v))
}

// TestSignalReceivedDue: a run parked on a signal that has arrived (due:
// its available_at has come) says so, not still "waiting on signal:".
func TestSignalReceivedDue(t *testing.T) {
	now := t0.Add(time.Minute)
	m := newView(now)
	d := detail(store.RunWaiting)
	d.Run.WaitReason = "signal:approval"
	m.SetDetail(d)
	if v := m.View(); !strings.Contains(v, "waiting on signal:approval") || strings.Contains(v, "received") {
		t.Fatalf("a run still waiting for its signal:\n%s", v)
	}
	d.Run.AvailableAt = now.Add(-time.Second)
	m.SetDetail(d)
	if v := m.View(); !strings.Contains(v, "signal approval received, due") || strings.Contains(v, "waiting on signal:") {
		t.Fatalf("a run whose signal arrived:\n%s", v)
	}
	// Due because its wait's timeout passed, with no signal: not "received".
	d.Steps = append(d.Steps, store.Step{Key: "approve", Step: "approve", Index: -1, Iteration: -1,
		Status: store.StepWaiting, Detail: "signal approval", WakeAt: now.Add(-time.Second)})
	m.SetDetail(d)
	if v := m.View(); !strings.Contains(v, "signal approval timed out, due") || strings.Contains(v, "received") {
		t.Fatalf("a run whose wait timed out:\n%s", v)
	}
}
