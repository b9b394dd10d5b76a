// Package schedules is flowtui's schedules tab: each schedule of the
// stored workflows with its next fires, its last run, and whether it is
// paused, with a cursor the root's pause, unpause and trigger act on.
//
// schedules reads the store (Load: the schedule listing and the status of
// each one's last run) but must not write it or act: the root carries the
// actions out through the engine (interp.Engine.PauseSchedule,
// TriggerSchedule) after a confirm.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// nextShown is how many next fires a row shows.
const nextShown = 2

// runIDPrefix is the shortest head of a run id the tab shows (as the runs
// list: a ULID's first ten characters are its creation millisecond).
const runIDPrefix = 10

// Model is the tab.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	width  int
	height int
	loaded bool
	err    error
	items  []store.Schedule
	status map[string]store.RunStatus // of the last runs, by run id
	cursor int
	offset int
}

// New returns the tab.
func New(disp *display.Display, km keys.KeyMap) Model { return Model{disp: disp, keys: km} }

// SetSize sets the area the tab draws in.
func (m *Model) SetSize(width, height int) { m.width, m.height = width, height; m.scroll() }

// LoadedMsg carries the schedules Load read, or the error reading them
// gave.
type LoadedMsg struct {
	Items []store.Schedule
	// RunStatus is the status of each schedule's last run, by run id; a
	// run deleted since is missing.
	RunStatus map[string]store.RunStatus
	Err       error
}

// Reader is what Load reads: a store's records (api.Records).
type Reader interface {
	ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error)
	RunGet(ctx context.Context, id string) (store.Run, error)
}

// Load reads every schedule, those dropped by later versions too, and the
// status of each one's last run.
func Load(ctx context.Context, st Reader) tea.Cmd {
	return func() tea.Msg {
		items, err := st.ScheduleList(ctx, store.ScheduleListParams{Inactive: true})
		if err != nil {
			return LoadedMsg{Err: err}
		}
		status := map[string]store.RunStatus{}
		for _, s := range items {
			if s.LastRunID == "" {
				continue
			}
			r, err := st.RunGet(ctx, s.LastRunID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return LoadedMsg{Err: fmt.Errorf("read run %s, the last of schedule %s/%s: %w", s.LastRunID, s.Workflow, s.Name, err)}
			default:
				status[s.LastRunID] = r.Status
			}
		}
		return LoadedMsg{Items: items, RunStatus: status}
	}
}

// Set shows freshly loaded schedules, or the error loading them gave; the
// cursor stays on the schedule it was on.
func (m *Model) Set(msg LoadedMsg) {
	keep, had := m.Selected()
	m.items, m.status, m.err, m.loaded = msg.Items, msg.RunStatus, msg.Err, true
	m.cursor = 0
	for i, s := range m.items {
		if had && s.Workflow == keep.Workflow && s.Name == keep.Name {
			m.cursor = i
		}
	}
	m.scroll()
}

// Selected returns the schedule under the cursor.
func (m Model) Selected() (store.Schedule, bool) {
	if m.cursor < 0 || m.cursor >= len(m.items) {
		return store.Schedule{}, false
	}
	return m.items[m.cursor], true
}

// Update moves the cursor, with keys, the wheel, or a click on a row.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.keys.Up):
			m.move(-1)
		case key.Matches(msg, m.keys.Down):
			m.move(1)
		case key.Matches(msg, m.keys.Top):
			m.move(-len(m.items))
		case key.Matches(msg, m.keys.Bottom):
			m.move(len(m.items))
		}
	case tea.MouseMsg:
		switch {
		case msg.Button == tea.MouseButtonWheelUp:
			m.move(-1)
		case msg.Button == tea.MouseButtonWheelDown:
			m.move(1)
		case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionRelease:
			if i := m.offset + msg.Y - 2; msg.Y >= 2 && i < len(m.items) {
				m.cursor = i
			}
		}
	}
	return m, nil
}

func (m *Model) move(d int) {
	m.cursor = max(0, min(len(m.items)-1, m.cursor+d))
	m.scroll()
}

func (m *Model) scroll() {
	h := m.height - 2
	if h <= 0 {
		return
	}
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(0, min(m.offset, len(m.items)-h))
}

// View renders the title, the header and the visible schedules.
func (m Model) View() string {
	st := m.disp.Styles
	title := st.Title.Render("Schedules") + " " + st.Faint.Render("p pause · u unpause · t trigger now")
	switch {
	case m.err != nil:
		return title + "\n" + st.Error.Render(theme.Cut("Cannot read the schedules: "+termtext.Line(m.err.Error()), m.width))
	case !m.loaded:
		return title + "\n" + st.Faint.Render("Loading…")
	case len(m.items) == 0:
		return title + "\n" + "No schedules. Declare a schedule block in a workflow and apply it."
	}
	now := m.disp.Clock.Now()
	nameW, specW, nextW := len("SCHEDULE"), len("WHEN"), len("NEXT FIRES")
	nexts := make([]string, len(m.items))
	for i, s := range m.items {
		nameW = max(nameW, len(termtext.Line(s.Workflow+"/"+s.Name)))
		specW = max(specW, len(termtext.Line(when(s))))
		nexts[i] = nextFires(s, now)
		nextW = max(nextW, len(nexts[i]))
	}
	nameW = min(nameW, max(12, m.width/3))
	specW, nextW = min(specW, 32), min(nextW, 22)
	c := columns{name: nameW, spec: specW, next: nextW}
	head := fmt.Sprintf("%-*s %-*s %-7s %-*s %s", nameW, "SCHEDULE", specW, "WHEN", "STATE", nextW, "NEXT FIRES", "LAST RUN")
	lines := []string{title, st.Header.Render(theme.Fit(head, m.width))}
	for i := m.offset; i < len(m.items) && i < m.offset+m.height-2; i++ {
		lines = append(lines, m.row(m.items[i], nexts[i], c, now, i == m.cursor))
	}
	return strings.Join(lines, "\n")
}

// columns are the widths of the tab's columns, each sized to its content
// up to a cap.
type columns struct{ name, spec, next int }

// when is a schedule's WHEN cell: its kind and spec, and its time zone
// when it is not UTC (a cron's hours are that zone's).
func when(s store.Schedule) string {
	w := s.Kind + " " + s.Spec
	if s.Timezone != "" && s.Timezone != "UTC" {
		w += " " + s.Timezone
	}
	return w
}

// nextFires is the countdowns to a schedule's next fires, "-" when it
// fires none (paused or dropped).
func nextFires(s store.Schedule, now time.Time) string {
	if !s.Active || s.Paused {
		return "-"
	}
	ts, err := interp.NextFires(s, now, nextShown)
	if err != nil {
		return "cannot compute: " + err.Error()
	}
	var ws []string
	for _, t := range ts {
		ws = append(ws, theme.Countdown(t, now))
	}
	if len(ws) == 0 {
		return "-"
	}
	return strings.Join(ws, ", ")
}

func (m Model) row(s store.Schedule, next string, c columns, now time.Time, selected bool) string {
	state := "active"
	switch {
	case !s.Active:
		state = "dropped"
	case s.Paused:
		state = "paused"
	}
	last := "none yet"
	if s.LastRunID != "" {
		rest := ""
		if st, ok := m.status[s.LastRunID]; ok {
			rest = " " + string(st)
		}
		if age := now.Sub(s.LastFiredAt).Round(time.Second); age < time.Second {
			rest += " just now"
		} else {
			rest += " " + theme.Duration(age) + " ago"
		}
		// The id is cut to what fits beside its status and age, never
		// below runIDPrefix: a prefix flowrun resolves, not an ellipsis.
		fixed := c.name + 1 + c.spec + 1 + 7 + 1 + c.next + 1
		id := s.LastRunID
		id = id[:max(min(runIDPrefix, len(id)), min(len(id), m.width-fixed-len(rest)))]
		last = termtext.Line(id) + rest
	}
	line := fmt.Sprintf("%s %s %-7s %s %s", theme.Fit(termtext.Line(s.Workflow+"/"+s.Name), c.name),
		theme.Fit(termtext.Line(when(s)), c.spec), state, theme.Fit(next, c.next), last)
	if selected {
		return m.disp.Styles.Selected.Render(theme.Fit(line, m.width))
	}
	return theme.Cut(line, m.width)
}
