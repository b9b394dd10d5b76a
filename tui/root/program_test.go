package root

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
)

// TestProgramShowsChangesLive runs the root model in a real bubbletea
// program (teatest): the runs list comes up, the waiting run opens, another
// party signals and finishes it while the program runs, and the next poll
// shows the run's steps done, before q ends the program.
func TestProgramShowsChangesLive(t *testing.T) {
	w := newWorld(t)
	disp := display.New(&bytes.Buffer{}, true, w.b.Clock)
	m := New(context.Background(), feed.Local(w.b.Engine, ""), disp, Options{Title: "test.db", NoTicks: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	out := tm.Output()
	// Each wait reads the output written since the last one.
	waitFor := func(ok func(s string) bool) {
		t.Helper()
		teatest.WaitFor(t, out, func(b []byte) bool { return ok(string(b)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}

	// The list shows the head of each run id, the prefix flowrun resolves.
	waitFor(func(s string) bool {
		return strings.Contains(s, "approve") && strings.Contains(s, "A-1") && strings.Contains(s, w.waiting.ID[:10])
	})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(func(s string) bool { return strings.Contains(s, "signal approval") })

	// Someone else signals the run and a worker finishes it.
	ctx := context.Background()
	if _, err := w.b.Engine.Signal(ctx, w.waiting.ID, "approval", []byte(`{"ok": true}`)); err != nil {
		t.Fatal(err)
	}
	if done := w.b.Drive(t, w.waiting.ID); done.Status != store.RunCompleted {
		t.Fatalf("the signaled run ended %s", done.Status)
	}
	tm.Send(PollMsg{})
	waitFor(func(s string) bool { return strings.Contains(s, "✓ ship") })

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.run.RunID() != w.waiting.ID {
		t.Errorf("the program ended on run %q, want %s", final.run.RunID(), w.waiting.ID)
	}
}

// TestProgramSignalFromList runs the root in a real bubbletea program
// (teatest): s on the waiting run's row of the list, right after the first
// load, opens the prompt with the signal the run waits for filled in.
func TestProgramSignalFromList(t *testing.T) {
	w := newWorld(t)
	disp := display.New(&bytes.Buffer{}, true, w.b.Clock)
	src := feed.Local(w.b.Engine, "")
	m := New(context.Background(), src, disp, Options{Title: "test.db", NoTicks: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	out := tm.Output()
	waitFor := func(ok func(s string) bool) {
		t.Helper()
		teatest.WaitFor(t, out, func(b []byte) bool { return ok(string(b)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	}
	waitFor(func(s string) bool { return strings.Contains(s, w.waiting.ID[:10]) })
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("s")})
	waitFor(func(s string) bool { return strings.Contains(s, "The run waits for: approval") })
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(func(s string) bool { return strings.Contains(s, "Send signal approval?") })
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.screen != screenRuns || final.confirm == nil {
		t.Errorf("the program ended on screen %d with confirm %v, want the runs list asking to send", final.screen, final.confirm != nil)
	}
}
