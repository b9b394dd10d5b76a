package schedules

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestSchedulesGolden(t *testing.T) {
	m := New(display.New(&bytes.Buffer{}, true, clock.NewFake(t0)), keys.Default())
	m.SetSize(110, 10)
	m.Set(LoadedMsg{Items: []store.Schedule{
		{Workflow: "report", Name: "nightly", Kind: "cron", Spec: "0 2 * * *", Timezone: "UTC", Active: true,
			LastRunID: "01JDAAAAAAAAAAAAAAAAAAAAAA", LastFiredAt: t0.Add(-25 * time.Hour)},
		{Workflow: "sync", Name: "often", Kind: "every", Spec: "15m", Timezone: "UTC", Active: true, Paused: true},
		{Workflow: "sync", Name: "old", Kind: "every", Spec: "1h", Timezone: "UTC",
			LastRunID: "01JDBBBBBBBBBBBBBBBBBBBBBB", LastFiredAt: t0.Add(-90 * time.Minute)},
	}, RunStatus: map[string]store.RunStatus{"01JDAAAAAAAAAAAAAAAAAAAAAA": store.RunFailed}})
	v := m.View()
	for _, want := range []string{"in 22h55m, in 1d22h", "01JDAAAAAAAAAAAAAAAAAAAAAA failed 1d01h ago", "paused", "dropped", "none yet",
		"01JDBBBBBBBBBBBBBBBBBBBBBB 1h30m ago"} {
		if !strings.Contains(v, want) {
			t.Errorf("the tab lacks %q:\n%s", want, v)
		}
	}
	golden.RequireEqual(t, []byte(v))
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
	if s, _ := m.Selected(); s.Name != "often" {
		t.Fatalf("down selects %s", s.Name)
	}
	m, _ = m.Update(tea.MouseMsg{Button: tea.MouseButtonLeft, Action: tea.MouseActionRelease, Y: 4})
	if s, _ := m.Selected(); s.Name != "old" {
		t.Fatalf("a click on the third row selects %s", s.Name)
	}
}
