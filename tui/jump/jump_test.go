package jump

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/tui/display"
)

func TestParse(t *testing.T) {
	for line, want := range map[string]GoMsg{
		"run @last":         {Run, "@last"},
		"  run deploy/K-1 ": {Run, "deploy/K-1"},
		"workflow billing":  {Workflow, "billing"},
		"wo billing":        {Workflow, "billing"},
		"dlq":               {DLQ, ""},
		"schedules":         {Schedules, ""},
	} {
		got, err := Parse(line)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", line, got, err, want)
		}
	}
	for line, want := range map[string]string{
		"":           "type a command",
		"run":        ":run takes one REF",
		"run a b":    ":run takes one REF",
		"dlq x":      ":dlq takes nothing",
		"teleport x": `unknown command "teleport"`,
	} {
		if _, err := Parse(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v, want %q", line, err, want)
		}
	}
}

func TestLineGolden(t *testing.T) {
	m := New(display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))))
	for _, r := range "run" {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd != nil {
		t.Fatal(":run without a reference was sent")
	}
	golden.RequireEqual(t, []byte(m.View()))
	for _, r := range " @last" {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if got := cmd(); got != (GoMsg{Run, "@last"}) {
		t.Fatalf("enter sent %#v", got)
	}
}
