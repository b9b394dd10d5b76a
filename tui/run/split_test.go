package run

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

func outLines(key string, from, to int, at time.Time) []interp.OutputLine {
	var out []interp.OutputLine
	for i := from; i <= to; i++ {
		out = append(out, interp.OutputLine{StepKey: key, Attempt: 1, Stream: store.StreamStdout, At: at.Add(time.Duration(i) * time.Millisecond),
			Text: fmt.Sprintf("label line %d", i), Seq: int64(i)})
	}
	return out
}

// The split view: the steps above, and under them the selected step's
// live output and events, following the end as lines come; scrolling up
// stops following, G follows again; a search highlights and n moves on.
func TestSplitViewFollowsSelectedStep(t *testing.T) {
	m := newView(t0.Add(30 * time.Second))
	m.SetSize(80, 24)
	m.SetDetail(detail(store.RunRunning))
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown}) // label
	m.AddOutput(outLines("label[0]", 1, 30, t0))
	m.AddOutput([]interp.OutputLine{{StepKey: "charge", Attempt: 2, Stream: store.StreamStderr, At: t0, Text: "not label's"}})
	v := m.View()
	if !strings.Contains(v, "label line 30") || strings.Contains(v, "label line 1\n") || strings.Contains(v, "not label's") {
		t.Fatalf("the log pane does not follow label's output:\n%s", v)
	}
	golden.RequireEqual(t, []byte(v))
	m.AddOutput(outLines("label[1]", 31, 31, t0))
	if !strings.Contains(m.View(), "label line 31") {
		t.Fatalf("a new line is not followed:\n%s", m.View())
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyTab}) // the log pane takes the keys
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyUp})
	if m.Log().Following() {
		t.Fatal("scrolling up still follows")
	}
	m.AddOutput(outLines("label[2]", 32, 32, t0))
	if strings.Contains(m.View(), "label line 32") {
		t.Fatalf("a paused pane jumped to the new line:\n%s", m.View())
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G")})
	if !m.Log().Following() || !strings.Contains(m.View(), "label line 32") {
		t.Fatalf("G does not follow again:\n%s", m.View())
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	for _, r := range "line 7" {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	v = m.View()
	if !strings.Contains(v, "/line 7 (1, n next)") || !strings.Contains(v, "label line 7") {
		t.Fatalf("the search does not find line 7:\n%s", v)
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyTab})
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyUp}) // back on the steps: charge
	if v := m.View(); !strings.Contains(v, "LOG step charge") || !strings.Contains(v, "#2 not label's") {
		t.Fatalf("the pane does not switch to the selected step:\n%s", v)
	}
}

// A click on a step selects it and the log pane shows it.
func TestClickSelectsStep(t *testing.T) {
	m := newView(t0.Add(30 * time.Second))
	m.SetSize(80, 24)
	m.SetDetail(detail(store.RunRunning))
	top := m.headerHeight()
	m, _ = m.Update(tea.MouseMsg{Button: tea.MouseButtonLeft, Action: tea.MouseActionRelease, Y: top + 3})
	if s, _ := m.SelectedStep(); s != "approval" || m.Log().Step() != "approval" {
		t.Fatalf("a click on the fourth step selected %q (log %q)", s, m.Log().Step())
	}
}

// Errors read as text: kind, message and exit code, then the tail of
// stderr; the run's inputs and outputs are shown.
func TestErrorAsTextAndInputsOutputs(t *testing.T) {
	raw := json.RawMessage(`{"kind":"exec","message":"the program failed","output":{"exit_code":7,"stderr":"a\nb\nc\nd\n"}}`)
	got := strings.Join(ErrorText(raw), "\n")
	want := "exec: the program failed · exit code 7\n  stderr│ b\n  stderr│ c\n  stderr│ d"
	if got != want {
		t.Fatalf("ErrorText =\n%s\nwant\n%s", got, want)
	}
	m := newView(t0.Add(30 * time.Second))
	m.SetSize(80, 24)
	d := detail(store.RunFailed)
	d.Run.Inputs = json.RawMessage(`{"order": "A-1"}`)
	d.Run.Outputs = json.RawMessage(`{"label": "L-9"}`)
	d.Run.Error = raw
	for i := range d.Steps {
		if d.Steps[i].Key == "charge" {
			d.Steps[i].Status, d.Steps[i].Error = store.StepFailed, raw
		}
	}
	m.SetDetail(d)
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown}) // charge
	v := m.View()
	for _, w := range []string{`inputs  {"order":"A-1"}`, `outputs {"label":"L-9"}`, "error: exec: the program failed · exit code 7", " stderr│ d"} {
		if !strings.Contains(v, w) {
			t.Errorf("the run view lacks %q:\n%s", w, v)
		}
	}
	if strings.Contains(v, `{"kind"`) {
		t.Errorf("an error is shown as raw JSON:\n%s", v)
	}
}
