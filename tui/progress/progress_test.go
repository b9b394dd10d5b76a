package progress

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
	"github.com/flowrun/flowrun/tui/theme"
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

	tctx := theme.NewContext(&bytes.Buffer{}, true, b.Clock)
	bg, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(bg, &feed.Source{Store: b.Store}, tctx, run.ID)
	m.noTicks = true
	m = settle(t, m, m.first())
	v := m.View()
	for _, want := range []string{"approve 1.0.0", "waiting", "◷ approval", "signal approval", "1/3 steps"} {
		if !strings.Contains(v, want) {
			t.Errorf("live view lacks %q:\n%s", want, v)
		}
	}

	// The run goes on; a tick's poll picks it up incrementally.
	if err := (feed.EngineActions{Engine: b.Engine}).Signal(context.Background(), run.ID, "approval", nil); err != nil {
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
		done <- Run(ctx, Options{Store: b.Store, RunID: run.ID, Out: &out, NoColor: true, Clock: b.Clock})
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
