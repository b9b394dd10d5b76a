// Package run is flowtui's run view: the run's header (workflow, the version
// it is bound to, status, key, duration, what it waits for), a banner when
// it is blocked on a version decision, and its steps in graph order as an
// indented tree with status icons, attempts, durations, retry and timer
// countdowns and the signal a step waits for.
//
// run must not read the store or act: it renders the feed.RunDetail it is
// given and tells the root which step to open with OpenStepMsg.
package run

import (
	"encoding/json"
	"time"

	"github.com/charmbracelet/bubbles/key"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/logpane"
)

// OpenStepMsg asks the root to open a step's view.
type OpenStepMsg struct {
	RunID   string
	StepKey string
}

// node is one step of the tree, with what its row shows.
type node struct {
	name     string
	depth    int
	kind     string
	signal   string // the signal a wait step takes
	status   store.StepStatus
	attempts int
	started  time.Time
	finished time.Time
	wake     time.Time
	detail   string
	errMsg   string
	errRaw   json.RawMessage
	// items and iterations fold the step's foreach items and until
	// iterations into its row.
	// itemsTotal is every item the step evaluated, started or not
	// (interp.ItemTotal); items counts those started.
	items, itemsDone, itemsFailed, itemsTotal int
	iterations                                int
}

// Model is the run view.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	width  int
	height int

	d      *feed.RunDetail
	nodes  []node
	cursor int
	offset int

	// log is the pane under the steps; focusLog gives it the keys.
	log      logpane.Model
	focusLog bool
}

// New returns an empty run view.
func New(disp *display.Display, km keys.KeyMap) Model {
	return Model{disp: disp, keys: km, log: logpane.New(disp, km)}
}

// SetSize sets the area the view draws in.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.scroll()
	m.log.SetSize(width, m.logHeight())
}

// Open empties the view for a run about to be shown: its detail comes
// with SetDetail, its output with AddOutput, in either order.
func (m *Model) Open() {
	m.SetDetail(nil)
	m.log.Reset()
	m.focusLog = false
}

// AddOutput appends live output lines of the shown run to the log pane.
func (m *Model) AddOutput(lines []interp.OutputLine) { m.log.Add(lines) }

// Capturing reports whether the log pane's search line takes every key.
func (m Model) Capturing() bool { return m.log.Capturing() }

// FocusLog reports whether the log pane has the keys.
func (m Model) FocusLog() bool { return m.focusLog }

// Log returns the log pane, for tests and the help bar.
func (m Model) Log() logpane.Model { return m.log }

// Detail returns the run shown, or nil.
func (m Model) Detail() *feed.RunDetail { return m.d }

// RunID returns the id of the run shown, or "".
func (m Model) RunID() string {
	if m.d == nil {
		return ""
	}
	return m.d.Run.ID
}

// SetDetail shows a run; the cursor stays on the step it was on.
func (m *Model) SetDetail(d *feed.RunDetail) {
	keep := ""
	if m.cursor < len(m.nodes) {
		keep = m.nodes[m.cursor].name
	}
	if m.d == nil || d == nil || m.d.Run.ID != d.Run.ID {
		keep, m.cursor, m.offset = "", 0, 0
	}
	m.d = d
	m.nodes = buildNodes(d)
	for i, n := range m.nodes {
		if n.name == keep {
			m.cursor = i
		}
	}
	m.cursor = max(0, min(m.cursor, len(m.nodes)-1))
	m.scroll()
	if d != nil {
		m.log.SetEvents(d.Events)
	}
	m.syncLog()
}

// syncLog points the log pane at the selected step and sizes it to what
// the header and the steps leave.
func (m *Model) syncLog() {
	name, _ := m.SelectedStep()
	m.log.SetStep(name)
	var pinned []string
	if m.cursor < len(m.nodes) && m.nodes[m.cursor].status == store.StepFailed {
		pinned = ErrorText(m.nodes[m.cursor].errRaw)
	}
	m.log.SetPinned(pinned)
	m.log.SetSize(m.width, m.logHeight())
}

// AddEvents appends new events of the shown run to its history.
func (m *Model) AddEvents(evs []store.Event) {
	if m.d == nil {
		return
	}
	for _, e := range evs {
		if e.RunID == m.d.Run.ID {
			m.d.Events = append(m.d.Events, e)
		}
	}
	m.log.SetEvents(m.d.Events)
}

// SelectedStep returns the step under the cursor.
func (m Model) SelectedStep() (string, bool) {
	if m.cursor >= len(m.nodes) {
		return "", false
	}
	return m.nodes[m.cursor].name, true
}

// WaitingSignals lists the signals the run's unfinished wait steps take
// (feed.RunDetail.WaitingSignals, as the runs list's signal action reads
// them).
func (m Model) WaitingSignals() []string { return m.d.WaitingSignals() }

// Update moves the cursor and opens steps; tab gives the keys to the log
// pane and back. The wheel scrolls the part under the pointer; a click on
// a step selects it.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if key.Matches(msg, m.keys.Focus) && !m.log.Capturing() {
			m.focusLog = !m.focusLog
			return m, nil
		}
		if m.log.Capturing() || m.focusLog && !key.Matches(msg, m.keys.Open) {
			var cmd tea.Cmd
			m.log, cmd = m.log.Update(msg)
			return m, cmd
		}
		switch {
		case key.Matches(msg, m.keys.Up):
			m.move(-1)
		case key.Matches(msg, m.keys.Down):
			m.move(1)
		case key.Matches(msg, m.keys.PageUp):
			m.move(-max(1, m.treeHeight()))
		case key.Matches(msg, m.keys.PageDown):
			m.move(max(1, m.treeHeight()))
		case key.Matches(msg, m.keys.Top):
			m.move(-len(m.nodes))
		case key.Matches(msg, m.keys.Bottom):
			m.move(len(m.nodes))
		case key.Matches(msg, m.keys.Open):
			if name, ok := m.SelectedStep(); ok && m.d != nil {
				id := m.d.Run.ID
				return m, func() tea.Msg { return OpenStepMsg{RunID: id, StepKey: name} }
			}
		}
	case tea.MouseMsg:
		top := m.headerHeight()
		logTop := top + m.treeHeight()
		if msg.Y >= logTop {
			var cmd tea.Cmd
			m.log, cmd = m.log.Update(msg)
			return m, cmd
		}
		switch {
		case msg.Button == tea.MouseButtonWheelUp:
			m.move(-1)
		case msg.Button == tea.MouseButtonWheelDown:
			m.move(1)
		case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionRelease:
			if i := m.offset + msg.Y - top; msg.Y >= top && i < len(m.nodes) {
				m.cursor = i
				m.focusLog = false
				m.syncLog()
			}
		}
	}
	return m, nil
}

func (m *Model) move(d int) {
	m.cursor = max(0, min(len(m.nodes)-1, m.cursor+d))
	m.scroll()
	m.syncLog()
}

func (m *Model) scroll() {
	h := m.treeHeight()
	if h <= 0 {
		return
	}
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(0, min(m.offset, len(m.nodes)-h))
}

// buildNodes lays the steps out in graph order with their depth (the
// longest chain of needs above them), folding items and iterations in.
func buildNodes(d *feed.RunDetail) []node {
	if d == nil {
		return nil
	}
	var nodes []node
	pos := map[string]int{}
	if d.Graph != nil {
		for _, s := range d.Graph.Steps {
			n := node{name: s.Name, kind: s.Action.Kind, status: store.StepPending}
			for _, need := range s.Needs {
				if i, ok := pos[need]; ok {
					n.depth = max(n.depth, nodes[i].depth+1)
				}
			}
			if s.Action.Kind == graph.KindWait && s.Action.Wait != nil {
				n.signal = s.Action.Wait.Signal
			}
			pos[s.Name] = len(nodes)
			nodes = append(nodes, n)
		}
	}
	for _, st := range d.Steps {
		i, ok := pos[st.Step]
		if !ok { // a step of another version, or no graph: listed flat
			pos[st.Step] = len(nodes)
			i = len(nodes)
			nodes = append(nodes, node{name: st.Step, status: store.StepPending})
		}
		n := &nodes[i]
		switch {
		case st.Key == st.Step:
			n.status, n.attempts, n.started, n.finished, n.wake, n.detail = st.Status, st.Attempts, st.StartedAt, st.FinishedAt, st.WakeAt, st.Detail
			n.errMsg, n.errRaw = errorMessage(st.Error), st.Error
			if total, err := interp.ItemTotal(st, d.Run.Inputs); err == nil {
				n.itemsTotal = total
			}
		case st.Index >= 0 && st.Iteration < 0:
			n.items++
			if st.Status.Terminal() {
				n.itemsDone++
			}
			if st.Status == store.StepFailed {
				n.itemsFailed++
			}
		case st.Iteration >= 0 && st.Index < 0:
			n.iterations = max(n.iterations, st.Iteration+1)
		}
	}
	// A run that ended failed or canceled never starts the steps left
	// pending: they read canceled, as `flowrun show` says (interp.Show,
	// semantics.md §2, §3), not pending, which reads as about to start.
	if d.Run.Status == store.RunFailed || d.Run.Status == store.RunCanceled {
		for i := range nodes {
			if nodes[i].status == store.StepPending {
				nodes[i].status = store.StepCanceled
			}
		}
	}
	return nodes
}

// errorMessage is the message of a {"kind","message"} error, on one line,
// escaped for the terminal: it quotes what a program wrote.
func errorMessage(raw json.RawMessage) string { return termtext.Line(feed.ErrorText(raw)) }
