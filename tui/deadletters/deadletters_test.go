package deadletters

import (
	"bytes"
	"encoding/json"
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

// TestViewEscapesStoredText: a dead letter's error quotes a program's
// stderr; its control characters are drawn escaped.
func TestViewEscapesStoredText(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp, keys.Default())
	m.SetSize(160, 10)
	m.Set([]store.DeadLetter{{ID: 1, RunID: "01RUN", Step: "each", Index: 2,
		Error: json.RawMessage("{\"message\":\"fake\x1b[2K\rall good \u202eevil\"}")}}, nil)
	v := m.View()
	if want := `fake\x1b[2K\rall good \u202eevil`; !strings.Contains(v, want) {
		t.Errorf("dead letters lack %q:\n%s", want, v)
	}
	if strings.ContainsAny(v, "\x1b\r\u202e") {
		t.Errorf("dead letters hold raw control characters:\n%q", v)
	}
}

// TestDeadLetterShowsItemValue: a dead letter shows its item's value, not
// only its index, and its error as text, not JSON (issue 24); a click
// selects a row.
func TestDeadLetterShowsItemValue(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp, keys.Default())
	m.SetSize(100, 10)
	m.Set([]store.DeadLetter{
		{ID: 1, RunID: "01JDAAAAAAAAAAAAAAAAAAAAAA", Step: "process", Index: 4, Item: json.RawMessage(`"batch-05"`),
			Error: json.RawMessage(`{"kind":"exec","message":"command \"sh\" exited with status 1"}`)},
		{ID: 2, RunID: "01JDBBBBBBBBBBBBBBBBBBBBBB", Step: "process", Index: 7, Item: json.RawMessage(`{"n":7}`)},
	}, nil)
	v := m.View()
	for _, want := range []string{"[4] batch-05", `[7] {"n":7}`, `exec: command "sh" exited with status 1`, "01JDAAAAAAAA"} {
		if !strings.Contains(v, want) {
			t.Errorf("dead letters lack %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, `{"kind"`) {
		t.Errorf("an error is shown as JSON:\n%s", v)
	}
	golden.RequireEqual(t, []byte(v))
	m, _ = m.Update(tea.MouseMsg{Button: tea.MouseButtonLeft, Action: tea.MouseActionRelease, Y: 3})
	if d, _ := m.Selected(); d.ID != 2 {
		t.Fatalf("a click on the second row selected %d", d.ID)
	}
}
