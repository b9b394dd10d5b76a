package runs

import (
	"bytes"
	"fmt"
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

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

var statuses = []store.RunStatus{store.RunCompleted, store.RunRunning, store.RunWaiting, store.RunFailed, store.RunBlocked, store.RunCanceled, store.RunPending}

// runID is the id of the k-th run of rows: a ULID-like id whose first ten
// characters (a ULID's creation millisecond) differ from run to run.
func runID(k int) string { return fmt.Sprintf("01JD%06dQ%015d", k, 7*k) }

// rows makes n runs, newest first, of three workflows.
func rows(n int) []feed.RunRow {
	out := make([]feed.RunRow, n)
	for i := range out {
		created := t0.Add(-time.Duration(i) * time.Minute)
		r := feed.RunRow{RunSummary: store.RunSummary{ID: runID(n - i), Workflow: []string{"deploy", "billing", "report"}[i%3],
			Version: "1.2.0", Key: fmt.Sprintf("K-%d", i), Status: statuses[i%len(statuses)], CreatedAt: created,
			StepsTotal: 8, StepsDone: i % 9}}
		if r.Status.Terminal() {
			r.FinishedAt = created.Add(time.Duration(i%50) * time.Second)
		}
		out[i] = r
	}
	return out
}

func newList(n int) Model {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(t0.Add(time.Hour)))
	m := New(disp, keys.Default())
	m.SetSize(80, 20)
	m.SetRuns(rows(n))
	return m
}

func runeKey(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestListGolden(t *testing.T) {
	m := newList(30)
	golden.RequireEqual(t, []byte(m.View()))
}

func TestFilterAndSort(t *testing.T) {
	m := newList(30)
	m, _ = m.Update(runeKey("f")) // the status menu, on running
	m, _ = m.Update(runeKey(" ")) // running on
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if st, _, _ := m.Filters(); len(st) != 1 || st[0] != store.RunRunning {
		t.Fatalf("status filter %q, want running", st)
	}
	for i := 0; i < m.Visible(); i++ {
		if r := m.rows[m.view[i]]; r.Status != store.RunRunning {
			t.Fatalf("row %d is %s under the running filter", i, r.Status)
		}
	}
	if !strings.Contains(m.View(), "status: running") {
		t.Errorf("the filter line does not say the filter:\n%s", m.View())
	}
	m, _ = m.Update(runeKey("w")) // workflow: billing (sorted first)
	if _, wf, _ := m.Filters(); wf != "billing" {
		t.Fatalf("workflow filter %q, want billing", wf)
	}
	for i := 0; i < m.Visible(); i++ {
		if r := m.rows[m.view[i]]; r.Workflow != "billing" || r.Status != store.RunRunning {
			t.Fatalf("row %d is %s/%s", i, r.Workflow, r.Status)
		}
	}
	m = newList(30)
	m, _ = m.Update(runeKey("o")) // oldest first
	if sel, _ := m.Selected(); sel.ID != runID(30) {
		t.Fatalf("sorting moved the cursor off its run to %s", sel.ID)
	}
	first := m.rows[m.view[0]]
	if first.ID != runID(1) {
		t.Fatalf("oldest first starts with %s", first.ID)
	}
	m, _ = m.Update(runeKey("o")) // by status: blocked first
	if r := m.rows[m.view[0]]; r.Status != store.RunBlocked {
		t.Fatalf("status order starts with %s, want blocked", r.Status)
	}
}

func TestApplyKeepsCursor(t *testing.T) {
	m := newList(30)
	m, _ = m.Update(runeKey("j"))
	m, _ = m.Update(runeKey("j"))
	sel, _ := m.Selected()
	newer := feed.RunRow{RunSummary: store.RunSummary{ID: runID(999999), Workflow: "deploy", Status: store.RunPending, CreatedAt: t0.Add(time.Minute)}}
	changed := sel
	changed.Status, changed.StepsDone = store.RunCompleted, 8
	m.Apply([]feed.RunRow{newer, changed})
	got, _ := m.Selected()
	if got.ID != sel.ID || got.Status != store.RunCompleted {
		t.Fatalf("cursor on %s (%s), want %s completed", got.ID, got.Status, sel.ID)
	}
	if m.Len() != 31 || m.rows[m.view[0]].ID != newer.ID {
		t.Fatalf("the new run is not first: %d runs, first %s", m.Len(), m.rows[m.view[0]].ID)
	}
}

func TestOpen(t *testing.T) {
	m := newList(3)
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter gave no command")
	}
	if msg, ok := cmd().(OpenMsg); !ok || msg.RunID != runID(3) {
		t.Fatalf("enter sent %#v", msg)
	}
}

// shown returns the id column of each row of a view, in order.
func shown(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n")[2:] {
		f := strings.Fields(l)
		if len(f) > 2 && isStatus(f[1]) {
			f = f[1:] // the status word beside the icon
		}
		if len(f) > 1 {
			out = append(out, f[1])
		}
	}
	return out
}

// TestIDPrefix checks that the list shows run ids as `flowrun` resolves
// them: the head of the id (what `flowrun runs` prints first), never an
// ellipsis and a tail, and long enough to tell every listed run apart:
// ten characters normally, more once two runs share them (created in the
// same millisecond), at every width.
func TestIDPrefix(t *testing.T) {
	for _, width := range []int{80, 120} {
		m := newList(5)
		m.SetSize(width, 20)
		ids := map[string]bool{}
		for _, r := range m.rows {
			ids[r.ID] = true
		}
		// resolves is what the CLI does with a prefix (store.RunFind):
		// the run it names, or "" when none or several match.
		resolves := func(p string) string {
			found := ""
			for id := range ids {
				if strings.HasPrefix(id, p) {
					if found != "" {
						return ""
					}
					found = id
				}
			}
			return found
		}
		check := func(what string, wantLen int) {
			t.Helper()
			got := shown(m.View())
			if len(got) != m.Visible() {
				t.Fatalf("%s: %d ids shown for %d rows:\n%s", what, len(got), m.Visible(), m.View())
			}
			for i, p := range got {
				row := m.rows[m.view[i]]
				if resolves(p) != row.ID {
					t.Fatalf("%s, width %d: row %d shows %q, which does not resolve to its run %s", what, width, i, p, row.ID)
				}
				if width < 110 && len(p) != wantLen {
					t.Fatalf("%s, width %d: row %d shows %q, want a %d-character prefix", what, width, i, p, wantLen)
				}
			}
		}
		check("distinct milliseconds", 10)
		// A run created in the same millisecond as run 3 (same first ten
		// characters, and two more) widens the column to tell them apart.
		twin := runID(3)[:12] + "ZZZZZZZZZZZZZZ"
		ids[twin] = true
		m.Apply([]feed.RunRow{{RunSummary: store.RunSummary{ID: twin, Workflow: "deploy", Version: "1.2.0", Status: store.RunPending, CreatedAt: t0.Add(time.Minute)}}})
		check("same millisecond", 13)
	}
}

func TestEmpty(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(t0))
	m := New(disp, keys.Default())
	m.SetSize(80, 20)
	m.SetRuns(nil)
	if !strings.Contains(m.View(), "No runs yet") {
		t.Fatalf("empty list:\n%s", m.View())
	}
}

// BenchmarkUpdateView10k is one poll's worth of work on a list of 10,000
// runs: a few rows re-read by the feed, then a frame drawn.
func BenchmarkUpdateView10k(b *testing.B) {
	m := newList(10000)
	m.SetSize(80, 20)
	base := rows(10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := base[(i*37)%len(base)]
		r.StepsDone = (r.StepsDone + 1) % 9
		m.Apply([]feed.RunRow{r})
		_ = m.View()
	}
}

// TestListEscapesStoredText: a run key is whatever the caller passed; its
// control characters are drawn escaped.
func TestListEscapesStoredText(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(t0.Add(time.Hour)))
	m := New(disp, keys.Default())
	m.SetSize(140, 10)
	m.SetRuns([]feed.RunRow{
		{RunSummary: store.RunSummary{ID: runID(1), Workflow: "deploy", Version: "1.0.0", Key: "\x1b[2K\u202e", Status: store.RunFailed, CreatedAt: t0}},
		{RunSummary: store.RunSummary{ID: runID(2), Workflow: "deploy", Version: "1.0.0", Key: "\x1b[1Ax", Status: store.RunFailed, CreatedAt: t0}},
	})
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown}) // the selected row is drawn in one block
	v := m.View()
	for _, want := range []string{`\x1b[2K\u202e`, `\x1b[1Ax`} {
		if !strings.Contains(v, want) {
			t.Errorf("runs list lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\r\u202e") {
		t.Errorf("runs list holds raw control characters:\n%q", v)
	}
}

// isStatus reports whether s is a run status word.
func isStatus(s string) bool {
	for _, st := range statuses {
		if string(st) == s {
			return true
		}
	}
	return false
}
