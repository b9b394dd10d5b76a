// Package deadletters is flowtui's dead-letter view: the foreach items that
// failed after their retries, with their run, step, item and error; the
// root retries or drops the selected one after a confirm.
//
// deadletters must not read the store or act: the root loads the open dead
// letters through the engine (interp.Engine.DeadLetterList, the store's own
// rows) and carries the retry or drop out.
package deadletters

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// Model is the view.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	width  int
	height int
	loaded bool
	err    error
	items  []store.DeadLetter
	cursor int
	offset int
}

// New returns the view.
func New(disp *display.Display, km keys.KeyMap) Model {
	return Model{disp: disp, keys: km}
}

// SetSize sets the area the view draws in.
func (m *Model) SetSize(width, height int) { m.width, m.height = width, height }

// Set shows a freshly loaded list, or the error that loading it gave.
func (m *Model) Set(items []store.DeadLetter, err error) {
	m.items, m.err, m.loaded = items, err, true
	m.cursor = max(0, min(m.cursor, len(items)-1))
}

// Selected returns the dead letter under the cursor.
func (m Model) Selected() (store.DeadLetter, bool) {
	if m.cursor >= len(m.items) {
		return store.DeadLetter{}, false
	}
	return m.items[m.cursor], true
}

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	move := func(d int) { m.cursor = max(0, min(len(m.items)-1, m.cursor+d)) }
	switch k := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(k, m.keys.Up):
			move(-1)
		case key.Matches(k, m.keys.Down):
			move(1)
		}
	case tea.MouseMsg:
		switch {
		case k.Button == tea.MouseButtonWheelUp:
			move(-1)
		case k.Button == tea.MouseButtonWheelDown:
			move(1)
		case k.Button == tea.MouseButtonLeft && k.Action == tea.MouseActionRelease:
			if i := m.offset + k.Y - 2; k.Y >= 2 && i < len(m.items) {
				m.cursor = i
			}
		}
	}
	{
		h := m.height - 2
		if m.cursor < m.offset {
			m.offset = m.cursor
		}
		if h > 0 && m.cursor >= m.offset+h {
			m.offset = m.cursor - h + 1
		}
	}
	return m, nil
}

// itemText is the item's value (issue 24: items read as an index, "4"
// instead of "batch-05"), with its index, escaped: a string shows bare.
func itemText(d store.DeadLetter) string {
	v := strings.TrimSpace(string(d.Item))
	var str string
	if json.Unmarshal(d.Item, &str) == nil {
		v = str
	} else if v == "" || v == "null" {
		v = "-"
	}
	return fmt.Sprintf("[%d] %s", d.Index, termtext.Line(v))
}

// View renders the list.
func (m Model) View() string {
	st := m.disp.Styles
	title := st.Title.Render("Dead letters")
	switch {
	case m.err != nil:
		return title + "\n" + st.Error.Render(theme.Cut("Cannot read the dead letters: "+termtext.Line(m.err.Error()), m.width))
	case !m.loaded:
		return title + "\n" + st.Faint.Render("Loading…")
	case len(m.items) == 0:
		return title + "\n" + "No dead letters."
	}
	lines := []string{title + fmt.Sprintf(" (%d)", len(m.items)),
		st.Header.Render(theme.Fit(fmt.Sprintf("%-6s %-12s %-16s %-22s %s", "ID", "RUN", "STEP", "ITEM", "ERROR"), m.width))}
	for i := m.offset; i < len(m.items) && i < m.offset+m.height-2; i++ {
		d := m.items[i]
		run := d.RunID
		if len(run) > 12 {
			run = run[:12] // the head, which flowrun resolves as a prefix
		}
		line := fmt.Sprintf("%-6d %-12s %-16s %s %s", d.ID, termtext.Line(run), theme.Cut(termtext.Line(d.Step), 16),
			theme.Fit(itemText(d), 22), termtext.Line(feed.ErrorText(d.Error)))
		if i == m.cursor {
			line = st.Selected.Render(theme.Fit(line, m.width))
		} else {
			line = theme.Cut(line, m.width)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
