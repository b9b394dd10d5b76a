package runs

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
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
)

func typeText(m Model, s string) Model {
	for _, r := range s {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return m
}

// / narrows the list at every key typed, over the id, workflow, key,
// status and error text; enter keeps the search, esc drops it.
func TestSearchAsYouType(t *testing.T) {
	m := newList(30)
	errRow := m.rows[5]
	errRow.Status, errRow.Error = store.RunFailed, "exec: connection refused by billing-db"
	m.Apply([]feed.RunRow{errRow})
	m, _ = m.Update(runeKey("/"))
	if !m.Capturing() {
		t.Fatal("/ does not open the search line")
	}
	m = typeText(m, "K-1")
	for i := 0; i < m.Visible(); i++ {
		if r := m.rows[m.view[i]]; !strings.Contains(r.Key, "K-1") {
			t.Fatalf("row %s (key %s) shown for the search K-1", r.ID, r.Key)
		}
	}
	if m.Visible() != 11 { // K-1, K-10..K-19
		t.Fatalf("%d rows match K-1, want 11", m.Visible())
	}
	for range 3 {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	m = typeText(m, "REFUSED") // the error text, any case
	if m.Visible() != 1 || m.rows[m.view[0]].ID != errRow.ID {
		t.Fatalf("search by error text shows %d rows", m.Visible())
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.Capturing() || m.Query() != "REFUSED" {
		t.Fatalf("enter: capturing %v, query %q", m.Capturing(), m.Query())
	}
	if !strings.Contains(m.View(), "/"+m.Query()) {
		t.Fatalf("the filter line does not show the search:\n%s", m.View())
	}
	golden.RequireEqual(t, []byte(m.View()))
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if m.Query() != "" || m.Visible() != 30 {
		t.Fatalf("esc kept the search %q (%d rows)", m.Query(), m.Visible())
	}
}

// f opens a menu of statuses that toggles each on and off and shows all
// with a, instead of a one-way cycle.
func TestStatusMenuToggles(t *testing.T) {
	m := newList(30)
	m, _ = m.Update(runeKey("f"))
	m, _ = m.Update(runeKey(" "))                  // running
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown}) // waiting
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown}) // blocked
	m, _ = m.Update(runeKey(" "))
	golden.RequireEqual(t, []byte(m.View()))
	for i := 0; i < m.Visible(); i++ {
		if s := m.rows[m.view[i]].Status; s != store.RunRunning && s != store.RunBlocked {
			t.Fatalf("row %d is %s under running+blocked", i, s)
		}
	}
	m, _ = m.Update(runeKey(" ")) // blocked off again
	if st, _, _ := m.Filters(); len(st) != 1 || st[0] != store.RunRunning {
		t.Fatalf("filters %v after toggling blocked off, want running", st)
	}
	m, _ = m.Update(runeKey("a"))
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if st, _, _ := m.Filters(); len(st) != 0 || m.Visible() != 30 || m.Capturing() {
		t.Fatalf("a then enter: filters %v, %d rows, capturing %v", st, m.Visible(), m.Capturing())
	}
}

// Columns are as wide as what they hold: a long key is shown whole while
// the workflow names are short (issue 24: WORKFLOW took about 70 cells
// while KEY was cut), and each icon has its status word.
func TestColumnsSizedToContent(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(t0.Add(time.Hour)))
	m := New(disp, keys.Default())
	m.SetSize(120, 10)
	key := "customer-2030-01-02-batch-0042"
	m.SetRuns([]feed.RunRow{{RunSummary: store.RunSummary{ID: runID(1), Workflow: "ingest", Version: "1.0.0", Key: key, Status: store.RunWaiting, CreatedAt: t0, StepsTotal: 3}}})
	v := m.View()
	if !strings.Contains(v, key) {
		t.Fatalf("the key is cut at 120 columns:\n%s", v)
	}
	if !strings.Contains(v, "◷ waiting") {
		t.Fatalf("the icon has no status word:\n%s", v)
	}
	if strings.Contains(v, "ingest          ") {
		t.Fatalf("the workflow column is wider than its names:\n%s", v)
	}
	m.SetSize(60, 10) // narrow: the word gives way before the key is cut
	if v := m.View(); strings.Contains(v, "waiting ") && !strings.Contains(v, key) {
		t.Fatalf("at 60 columns the status word stays while the key is cut:\n%s", v)
	}
}
