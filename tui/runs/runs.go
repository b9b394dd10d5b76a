// Package runs is the runs list of flowtui: every run, filtered by status
// and workflow, sorted, with a progress bar of steps done over steps total
// and the run's duration, kept current by the rows the feed re-reads.
//
// runs must not read the store or act on runs: it shows rows it is given
// and tells the root which run to open with OpenMsg.
package runs

import (
	"sort"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
)

// OpenMsg asks the root to open a run's view.
type OpenMsg struct{ RunID string }

// Sort is an order of the list.
type Sort int

// The orders, cycled by the sort key.
const (
	SortNewest Sort = iota
	SortOldest
	SortStatus
	SortWorkflow
	SortLongest
	sortCount
)

// String names the order for the filter line.
func (s Sort) String() string {
	return [...]string{"newest", "oldest", "status", "workflow", "longest"}[s]
}

// menuStatuses are the statuses the status menu toggles, in its order.
var menuStatuses = []store.RunStatus{store.RunRunning, store.RunWaiting, store.RunBlocked, store.RunPending,
	store.RunFailed, store.RunCompleted, store.RunCanceled}

// Model is the runs list.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	width  int
	height int

	rows  []feed.RunRow
	index map[string]int // run id → position in rows
	idLen int            // the id prefix length that tells the rows apart

	statuses map[store.RunStatus]bool // the statuses shown; none is all
	workflow string
	order    Sort
	query    string // the search typed after /: rows holding it in any field
	typing   bool   // the search line takes the keys
	menu     bool   // the status menu is open and takes the keys
	menuAt   int    // the menu's cursor in menuStatuses

	view   []int // positions in rows, filtered and sorted
	cursor int   // position in view
	offset int   // first visible position in view
	loaded bool
}

// New returns an empty list.
func New(disp *display.Display, km keys.KeyMap) Model {
	return Model{disp: disp, keys: km, index: map[string]int{}, statuses: map[store.RunStatus]bool{}}
}

// SetSize sets the area the list draws in.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.scroll()
}

// SetRuns replaces every row (the first load), newest first.
func (m *Model) SetRuns(rows []feed.RunRow) {
	m.rows = append(m.rows[:0], rows...)
	m.index = make(map[string]int, len(rows))
	for i, r := range m.rows {
		m.index[r.ID] = i
	}
	m.idLen = m.prefixLen()
	m.loaded = true
	m.rebuild("")
}

// Apply updates the rows the feed re-read and adds new runs. Only the
// filtered view is rebuilt; the cursor stays on the run it was on.
func (m *Model) Apply(rows []feed.RunRow) {
	if len(rows) == 0 {
		return
	}
	keep := m.selectedID()
	added := false
	for _, r := range rows {
		if i, ok := m.index[r.ID]; ok {
			m.rows[i] = r
			continue
		}
		m.index[r.ID] = len(m.rows)
		m.rows = append(m.rows, r)
		added = true
	}
	if added {
		m.idLen = m.prefixLen()
	}
	m.rebuild(keep)
}

// prefixLen is the length of the run id prefixes that tell the rows apart.
func (m Model) prefixLen() int {
	ids := make([]string, len(m.rows))
	for i, r := range m.rows {
		ids[i] = r.ID
	}
	return uniquePrefix(ids)
}

// Len is the number of runs the list holds, before filtering.
func (m Model) Len() int { return len(m.rows) }

// Visible is the number of runs that pass the filters.
func (m Model) Visible() int { return len(m.view) }

// Selected returns the run under the cursor.
func (m Model) Selected() (feed.RunRow, bool) {
	if m.cursor < 0 || m.cursor >= len(m.view) {
		return feed.RunRow{}, false
	}
	return m.rows[m.view[m.cursor]], true
}

func (m Model) selectedID() string {
	r, _ := m.Selected()
	return r.ID
}

// Filters returns the statuses shown (none for all, in menu order), the
// workflow filter ("" for all) and the order.
func (m Model) Filters() ([]store.RunStatus, string, Sort) {
	var on []store.RunStatus
	for _, s := range menuStatuses {
		if m.statuses[s] {
			on = append(on, s)
		}
	}
	return on, m.workflow, m.order
}

// Query returns the search typed after /.
func (m Model) Query() string { return m.query }

// Capturing reports whether the list takes every key (the search line or
// the status menu is open), so the root's own keys do not act.
func (m Model) Capturing() bool { return m.typing || m.menu }

// SetWorkflow shows only the runs of a workflow ("" for all), as `:workflow
// NAME` asks.
func (m *Model) SetWorkflow(name string) {
	m.workflow = name
	m.rebuild(m.selectedID())
}

// Workflows lists the workflows of the runs the list holds, sorted.
func (m Model) Workflows() []string { return m.workflows()[1:] }

// Select puts the cursor on a run when it is shown.
func (m *Model) Select(id string) bool {
	for i, p := range m.view {
		if m.rows[p].ID == id {
			m.cursor = i
			m.scroll()
			return true
		}
	}
	return false
}

// Update handles navigation, filters and sorting.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if m.typing {
			m.typeKey(msg)
			return m, nil
		}
		if m.menu {
			m.menuKey(msg)
			return m, nil
		}
		switch {
		case key.Matches(msg, m.keys.Search):
			m.typing = true
		case key.Matches(msg, m.keys.Back) && m.query != "":
			m.query = ""
			m.rebuild(m.selectedID())
		case key.Matches(msg, m.keys.Up):
			m.move(-1)
		case key.Matches(msg, m.keys.Down):
			m.move(1)
		case key.Matches(msg, m.keys.PageUp):
			m.move(-max(1, m.listHeight()))
		case key.Matches(msg, m.keys.PageDown):
			m.move(max(1, m.listHeight()))
		case key.Matches(msg, m.keys.Top):
			m.move(-len(m.view))
		case key.Matches(msg, m.keys.Bottom):
			m.move(len(m.view))
		case key.Matches(msg, m.keys.FilterStatus):
			m.menu = true
		case key.Matches(msg, m.keys.FilterWorkflow):
			m.workflow = next(m.workflows(), m.workflow)
			m.rebuild(m.selectedID())
		case key.Matches(msg, m.keys.Sort):
			m.order = (m.order + 1) % sortCount
			m.rebuild(m.selectedID())
		case key.Matches(msg, m.keys.Open):
			if r, ok := m.Selected(); ok {
				return m, func() tea.Msg { return OpenMsg{RunID: r.ID} }
			}
		}
	case tea.MouseMsg:
		switch {
		case msg.Button == tea.MouseButtonWheelUp:
			m.move(-1)
		case msg.Button == tea.MouseButtonWheelDown:
			m.move(1)
		case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionRelease:
			// Y is relative to the list: line 0 is the filter line, 1 the
			// header (and the status menu, when open, the lines under it).
			top := 2 + m.menuHeight()
			if i := m.offset + msg.Y - top; msg.Y >= top && i < len(m.view) {
				m.cursor = i
			}
		}
	}
	return m, nil
}

func next[T comparable](cycle []T, cur T) T {
	for i, v := range cycle {
		if v == cur {
			return cycle[(i+1)%len(cycle)]
		}
	}
	return cycle[0]
}

// workflows lists "" then every workflow name, sorted.
func (m Model) workflows() []string {
	seen := map[string]bool{}
	out := []string{""}
	for _, r := range m.rows {
		if !seen[r.Workflow] {
			seen[r.Workflow] = true
			out = append(out, r.Workflow)
		}
	}
	sort.Strings(out[1:])
	return out
}

func (m *Model) move(d int) {
	m.cursor = max(0, min(len(m.view)-1, m.cursor+d))
	m.scroll()
}

func (m *Model) scroll() {
	h := m.listHeight()
	if h <= 0 {
		return
	}
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(0, min(m.offset, len(m.view)-h))
}

// listHeight is the number of run rows that fit: the filter line and the
// header take two lines, and the status menu its own when open.
func (m Model) listHeight() int { return m.height - 2 - m.menuHeight() }

// rebuild filters and sorts, keeping the cursor on keep when it is still
// shown.
func (m *Model) rebuild(keep string) {
	m.view = m.view[:0]
	for i, r := range m.rows {
		if (len(m.statuses) == 0 || m.statuses[r.Status]) && (m.workflow == "" || r.Workflow == m.workflow) && matches(r, m.query) {
			m.view = append(m.view, i)
		}
	}
	now := m.disp.Clock.Now()
	rows := m.rows
	less := func(a, b int) bool { // newest first: created, then id, descending
		ra, rb := &rows[a], &rows[b]
		if !ra.CreatedAt.Equal(rb.CreatedAt) {
			return ra.CreatedAt.After(rb.CreatedAt)
		}
		return ra.ID > rb.ID
	}
	var by func(a, b int) bool
	switch m.order {
	case SortNewest:
		by = less
	case SortOldest:
		by = func(a, b int) bool { return less(b, a) }
	case SortStatus:
		by = func(a, b int) bool {
			if ra, rb := statusRank(rows[a].Status), statusRank(rows[b].Status); ra != rb {
				return ra < rb
			}
			return less(a, b)
		}
	case SortWorkflow:
		by = func(a, b int) bool {
			if rows[a].Workflow != rows[b].Workflow {
				return rows[a].Workflow < rows[b].Workflow
			}
			return less(a, b)
		}
	case SortLongest:
		by = func(a, b int) bool {
			if da, db := elapsed(rows[a], now), elapsed(rows[b], now); da != db {
				return da > db
			}
			return less(a, b)
		}
	}
	sort.SliceStable(m.view, func(i, j int) bool { return by(m.view[i], m.view[j]) })
	m.cursor = 0
	if keep != "" {
		for i, p := range m.view {
			if m.rows[p].ID == keep {
				m.cursor = i
				break
			}
		}
	}
	m.scroll()
}

// statusRank orders statuses by how much they need attention.
func statusRank(s store.RunStatus) int {
	switch s {
	case store.RunBlocked:
		return 0
	case store.RunFailed:
		return 1
	case store.RunRunning:
		return 2
	case store.RunWaiting:
		return 3
	case store.RunPending:
		return 4
	case store.RunCanceled:
		return 5
	}
	return 6
}
