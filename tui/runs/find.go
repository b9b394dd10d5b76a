package runs

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/theme"
)

// The search line and the status menu: how the list is narrowed by hand.

// matches reports whether a row holds q, case-folded, in its id, workflow,
// version, key, status or error text. An empty q matches every row.
func matches(r feed.RunRow, q string) bool {
	if q == "" {
		return true
	}
	q = strings.ToLower(q)
	for _, f := range []string{r.ID, r.Workflow, r.Version, r.Key, string(r.Status), r.Error} {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

// typeKey edits the search line: the list narrows at each key; enter keeps
// the search and gives the keys back, esc drops it.
func (m *Model) typeKey(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEnter:
		m.typing = false
		return
	case tea.KeyEsc:
		m.typing, m.query = false, ""
	case tea.KeyBackspace:
		if r := []rune(m.query); len(r) > 0 {
			m.query = string(r[:len(r)-1])
		}
	case tea.KeyCtrlU:
		m.query = ""
	case tea.KeyRunes, tea.KeySpace:
		m.query += string(k.Runes)
	default:
		return
	}
	m.rebuild(m.selectedID())
}

// menuKey moves in the status menu and toggles statuses; the list follows
// each toggle. a shows all again; enter, esc or f closes the menu.
func (m *Model) menuKey(k tea.KeyMsg) {
	switch {
	case key.Matches(k, m.keys.Up):
		m.menuAt = max(0, m.menuAt-1)
	case key.Matches(k, m.keys.Down):
		m.menuAt = min(len(menuStatuses)-1, m.menuAt+1)
	case key.Matches(k, m.keys.Toggle):
		s := menuStatuses[m.menuAt]
		if m.statuses[s] {
			delete(m.statuses, s)
		} else {
			m.statuses[s] = true
		}
		m.rebuild(m.selectedID())
	case key.Matches(k, m.keys.All):
		clear(m.statuses)
		m.rebuild(m.selectedID())
	case k.Type == tea.KeyEnter || k.Type == tea.KeyEsc || key.Matches(k, m.keys.FilterStatus):
		m.menu = false
		m.scroll()
	}
}

// menuHeight is the number of lines the status menu takes.
func (m Model) menuHeight() int {
	if !m.menu {
		return 0
	}
	return len(menuStatuses) + 1
}

// menuView draws the status menu: every status with its box, the cursor
// on one.
func (m Model) menuView() string {
	st := m.disp.Styles
	var b strings.Builder
	for i, s := range menuStatuses {
		box := "[ ]"
		if m.statuses[s] {
			box = "[x]"
		}
		item := " " + box + " " + string(s)
		if i == m.menuAt {
			item = st.Selected.Render(theme.Fit(item, 16))
		}
		b.WriteString(item + "\n")
	}
	return b.String() + st.Faint.Render(" space toggle · a all · enter close")
}

// filterLine says what the list shows.
func (m Model) filterLine() string {
	on, workflow, order := m.Filters()
	status := "all"
	if len(on) > 0 {
		var ws []string
		for _, s := range on {
			ws = append(ws, string(s))
		}
		status = strings.Join(ws, ",")
	}
	if workflow == "" {
		workflow = "all"
	}
	line := strings.Join([]string{
		strconv.Itoa(len(m.view)) + " of " + strconv.Itoa(len(m.rows)) + " runs",
		"status: " + status, "workflow: " + workflow, "sort: " + order.String()}, " · ")
	switch {
	case m.typing:
		line = "/" + termtext.Line(m.query) + "█  " + line
	case m.query != "":
		line = "/" + termtext.Line(m.query) + "  " + line
	}
	return line
}
