package root

import (
	"context"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

const hourlyHCL = `
workflow "hourly" {
  version = "1.0.0"
  schedule "top" {
    every = "1h"
  }
  step "s" {
    set { ok = true }
  }
}
`

// TestSchedulesThroughEngine: 4 opens the schedules tab (the golden);
// p, t and u each ask first and, confirmed, pause, trigger and unpause the
// schedule through the engine, and the tab reloads to show it: paused, the
// triggered run with its status as its last run, active again.
func TestSchedulesThroughEngine(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	mod, diags := lang.LoadFile("hourly.hcl", []byte(hourlyHCL))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g := mod.Workflows[0].Graph
	if _, err := b.Engine.StoreGraph(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Engine.ActivateSchedules(ctx, g, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	m := newRoot(t, feed.Local(b.Engine, "tui (user test)"), b)
	m = press(t, m, "4")
	v := m.View()
	checkSize(t, v)
	golden.RequireEqual(t, []byte(v))

	m = press(t, m, "p")
	if !strings.Contains(boxed(m.View()), "Pause schedule hourly/top?") {
		t.Fatalf("p did not ask first:\n%s", m.View())
	}
	if sc, _ := b.Store.ScheduleGet(ctx, "hourly", "top"); sc.Paused {
		t.Fatal("paused before the confirm")
	}
	m = press(t, m, "y")
	if sc, _ := b.Store.ScheduleGet(ctx, "hourly", "top"); !sc.Paused {
		t.Fatal("p, y did not pause the schedule")
	}
	if v := flat(m.View()); !strings.Contains(v, "Schedule hourly/top paused.") || !strings.Contains(v, "every 1h paused -") {
		t.Fatalf("the tab does not show it paused:\n%s", m.View())
	}

	m = press(t, m, "t", "y")
	id := regexp.MustCompile(`triggered: run (\w+)\.`).FindStringSubmatch(flat(m.View()))
	if id == nil {
		t.Fatalf("t, y reported no run:\n%s", m.View())
	}
	if sc, _ := b.Store.ScheduleGet(ctx, "hourly", "top"); sc.LastRunID != id[1] {
		t.Fatalf("the schedule's last run is %q, want %s", sc.LastRunID, id[1])
	}
	// At 80 columns the id is cut to a prefix flowrun resolves.
	if !regexp.MustCompile(`every 1h paused - ` + id[1][:10] + `\w* pending just now`).MatchString(flat(m.View())) {
		t.Fatalf("the tab does not show the triggered run with its status:\n%s", m.View())
	}

	m = press(t, m, "u", "y")
	if sc, _ := b.Store.ScheduleGet(ctx, "hourly", "top"); sc.Paused {
		t.Fatal("u, y did not unpause the schedule")
	}
	if v := flat(m.View()); !strings.Contains(v, "Schedule hourly/top unpaused.") || !strings.Contains(v, "every 1h active in ") {
		t.Fatalf("the tab does not show it active:\n%s", m.View())
	}
}

// TestSchedulesMouse: on the schedules tab a click on a row selects that
// schedule (the root takes its title bar off the row) and the wheel moves
// the selection; p then names the schedule the mouse chose.
func TestSchedulesMouse(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	mod, diags := lang.LoadFile("hourly.hcl", []byte(strings.Replace(hourlyHCL, `schedule "top" {`, `schedule "half" {
    every = "30m"
  }
  schedule "top" {`, 1)))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g := mod.Workflows[0].Graph
	if _, err := b.Engine.StoreGraph(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Engine.ActivateSchedules(ctx, g, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	m := press(t, newRoot(t, feed.Local(b.Engine, ""), b), "4")
	lines := strings.Split(m.View(), "\n")
	row := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "hourly/top ") {
			row = i
		}
	}
	if row < 0 || !strings.HasPrefix(lines[row-1], "hourly/half ") {
		t.Fatalf("want hourly/half above hourly/top:\n%s", m.View())
	}
	m = send(t, m, tea.MouseMsg{X: 3, Y: row, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	m = send(t, m, tea.MouseMsg{X: 3, Y: row, Button: tea.MouseButtonLeft, Action: tea.MouseActionRelease})
	if m = press(t, m, "p"); !strings.Contains(boxed(m.View()), "Pause schedule hourly/top?") {
		t.Fatalf("a click on hourly/top then p asks:\n%s", m.View())
	}
	m = press(t, m, "n")
	m = send(t, m, tea.MouseMsg{X: 3, Y: row, Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
	if m = press(t, m, "p"); !strings.Contains(boxed(m.View()), "Pause schedule hourly/half?") {
		t.Fatalf("the wheel up then p asks:\n%s", m.View())
	}
}
