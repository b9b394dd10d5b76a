// Package logpane is the log pane of flowtui's run view: the live output
// of the selected step (every attempt, stdout and stderr, as
// interp.OutputFollower gives it out line by line) and the step's events,
// in the order they happened, with scrolling, following the end as lines
// come, and a search that highlights its matches.
//
// logpane must not read the store: the root reads the output and hands
// the lines over with Add; the events come with the run's detail.
package logpane

import (
	"fmt"
	"sort"
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

// maxLines bounds the output lines kept per run: the oldest go first.
const maxLines = 20000

// entry is one line the pane can show.
type entry struct {
	key  string // the step key it belongs to; "" for a run event
	at   time.Time
	seq  int64 // order among lines of the same instant
	text string
	err  bool // stderr, or an event that failed something
	rank int  // order at one instant: 0 a start, 1 output, 2 other events
}

// Model is the pane.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	width  int
	height int

	output []entry // every output line of the run, in store order
	events []entry // the run's events
	step   string  // the step shown; "" shows the run's own events

	shown  []entry // what the pane shows now, built by rebuild
	offset int     // first shown line at the top of the pane
	follow bool    // keep the last line in view as lines come

	query  string
	typing bool

	pinned []string // drawn under the title: the step's error, as text
}

// SetPinned sets the lines drawn under the title whatever the scroll (the
// failed step's error, already escaped).
func (m *Model) SetPinned(lines []string) {
	m.pinned = lines
	m.clamp()
}

// New returns an empty pane that follows.
func New(disp *display.Display, km keys.KeyMap) Model {
	return Model{disp: disp, keys: km, follow: true}
}

// SetSize sets the area the pane draws in, its title line included.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, max(1, height)
	m.clamp()
}

// Reset empties the pane for another run.
func (m *Model) Reset() {
	m.output, m.events, m.shown, m.step = nil, nil, nil, ""
	m.offset, m.follow, m.query, m.typing = 0, true, "", false
}

// Add appends output lines read from the store (interp.OutputFollower).
func (m *Model) Add(lines []interp.OutputLine) {
	if len(lines) == 0 {
		return
	}
	for _, l := range lines {
		text := l.Text
		if l.Partial {
			text += "⏎" // no newline ended it (yet)
		}
		if l.Attempt > 1 {
			text = fmt.Sprintf("#%d ", l.Attempt) + text
		}
		m.output = append(m.output, entry{key: l.StepKey, at: l.At, seq: l.Seq, text: text, err: l.Stream == store.StreamStderr, rank: 1})
	}
	if n := len(m.output); n > maxLines {
		m.output = append(m.output[:0], m.output[n-maxLines:]...)
	}
	m.rebuild()
}

// SetEvents replaces the run's events.
func (m *Model) SetEvents(evs []store.Event) {
	m.events = m.events[:0]
	for _, e := range evs {
		line := e.Kind
		if len(e.Data) > 0 && string(e.Data) != "null" && string(e.Data) != "{}" {
			line += " " + string(e.Data)
		}
		if e.StepKey != "" && e.StepKey != stepOf(e.StepKey) {
			line = e.StepKey + " " + line
		}
		rank := 2
		if strings.HasSuffix(e.Kind, "_started") {
			rank = 0
		}
		m.events = append(m.events, entry{key: e.StepKey, at: e.At, seq: e.ID, text: "· " + line,
			err: strings.Contains(e.Kind, "fail") || strings.Contains(e.Kind, "dead"), rank: rank})
	}
	m.rebuild()
}

// SetStep shows another step's lines ("" for the run's own events); the
// pane follows again.
func (m *Model) SetStep(name string) {
	if name == m.step {
		return
	}
	m.step, m.follow = name, true
	m.rebuild()
}

// Step returns the step shown.
func (m Model) Step() string { return m.step }

// Following reports whether the pane keeps the last line in view.
func (m Model) Following() bool { return m.follow }

// Capturing reports whether the search line takes every key.
func (m Model) Capturing() bool { return m.typing }

// stepOf is the step name of a step key: "label[3]" and "poll#2" are of
// "label" and "poll".
func stepOf(k string) string {
	if i := strings.IndexAny(k, "[#"); i > 0 {
		return k[:i]
	}
	return k
}

// rebuild picks the lines of the shown step, output and events in the
// order they happened.
func (m *Model) rebuild() {
	m.shown = m.shown[:0]
	for _, src := range [][]entry{m.output, m.events} {
		for _, e := range src {
			if (m.step == "" && e.key == "") || (m.step != "" && stepOf(e.key) == m.step) {
				m.shown = append(m.shown, e)
			}
		}
	}
	// At one instant (a coarse clock), a step's start comes before its
	// output and its end after it.
	sort.SliceStable(m.shown, func(i, j int) bool {
		a, b := m.shown[i], m.shown[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.rank < b.rank
	})
	m.clamp()
}

// body is the number of lines under the title and the pinned lines.
func (m Model) body() int { return max(1, m.height-1-len(m.pinned)) }

func (m *Model) clamp() {
	last := max(0, len(m.shown)-m.body())
	if m.follow {
		m.offset = last
	}
	m.offset = max(0, min(m.offset, last))
}

func (m *Model) scroll(d int) {
	m.offset += d
	last := max(0, len(m.shown)-m.body())
	m.offset = max(0, min(m.offset, last))
	m.follow = m.offset == last
}

// Update scrolls, follows and searches; the run view hands it the keys
// while the pane has the focus, and wheel events over the pane.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if m.typing {
			m.typeKey(msg)
			return m, nil
		}
		switch {
		case key.Matches(msg, m.keys.Up):
			m.scroll(-1)
		case key.Matches(msg, m.keys.Down):
			m.scroll(1)
		case key.Matches(msg, m.keys.PageUp):
			m.scroll(-m.body())
		case key.Matches(msg, m.keys.PageDown):
			m.scroll(m.body())
		case key.Matches(msg, m.keys.Top):
			m.scroll(-len(m.shown))
		case key.Matches(msg, m.keys.Bottom), key.Matches(msg, m.keys.Follow):
			m.follow = true
			m.clamp()
		case key.Matches(msg, m.keys.Search):
			m.typing, m.query = true, ""
		case key.Matches(msg, m.keys.NextMatch):
			m.findNext(m.offset + 1)
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			m.scroll(-3)
		case tea.MouseButtonWheelDown:
			m.scroll(3)
		}
	}
	return m, nil
}

// typeKey edits the search; each key moves to the first match from the
// top of the pane; enter keeps it (n finds the next), esc drops it.
func (m *Model) typeKey(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEnter:
		m.typing = false
		return
	case tea.KeyEsc:
		m.typing, m.query = false, ""
		return
	case tea.KeyBackspace:
		if r := []rune(m.query); len(r) > 0 {
			m.query = string(r[:len(r)-1])
		}
	case tea.KeyRunes, tea.KeySpace:
		m.query += string(k.Runes)
	default:
		return
	}
	m.findNext(m.offset)
}

// findNext scrolls so that the first line at or after from holding the
// search is at the top, wrapping to the start; it stops following.
func (m *Model) findNext(from int) {
	if m.query == "" || len(m.shown) == 0 {
		return
	}
	q := strings.ToLower(m.query)
	for i := range m.shown {
		j := (from + i) % len(m.shown)
		if strings.Contains(strings.ToLower(m.shown[j].text), q) {
			m.offset, m.follow = j, false
			last := max(0, len(m.shown)-m.body())
			m.offset = min(m.offset, last)
			if m.offset == last {
				m.follow = false
			}
			return
		}
	}
}

// Matches counts the shown lines that hold the search.
func (m Model) Matches() int {
	if m.query == "" {
		return 0
	}
	n, q := 0, strings.ToLower(m.query)
	for _, e := range m.shown {
		if strings.Contains(strings.ToLower(e.text), q) {
			n++
		}
	}
	return n
}

// View draws the title (what is shown, whether it follows, the search)
// and the lines; lines holding the search are drawn reversed.
func (m Model) View(focused bool) string {
	st := m.disp.Styles
	what := "run events"
	if m.step != "" {
		what = "step " + termtext.Line(m.step) + " output and events"
	}
	state := "following"
	if !m.follow {
		state = fmt.Sprintf("line %d/%d · G follow", min(m.offset+1, len(m.shown)), len(m.shown))
	}
	title := "LOG " + what + " · " + state
	switch {
	case m.typing:
		title += " · /" + termtext.Line(m.query) + "█"
	case m.query != "":
		title += fmt.Sprintf(" · /%s (%d, n next)", termtext.Line(m.query), m.Matches())
	}
	if focused {
		title = st.Header.Render(theme.Fit("▌"+title, m.width))
	} else {
		title = st.Faint.Render(theme.Fit(" "+title+" · tab to focus", m.width))
	}
	lines := []string{title}
	for _, p := range m.pinned {
		lines = append(lines, st.Error.Render(theme.Cut(" "+p, m.width)))
	}
	if len(m.shown) == 0 {
		lines = append(lines, st.Faint.Render(" nothing yet"))
	}
	q := strings.ToLower(m.query)
	for i := m.offset; i < len(m.shown) && i < m.offset+m.body(); i++ {
		e := m.shown[i]
		line := " " + termtext.Line(e.text)
		switch {
		case q != "" && strings.Contains(strings.ToLower(e.text), q):
			line = st.Selected.Render(theme.Cut(line, m.width))
		case e.err:
			line = st.Error.Render(theme.Cut(line, m.width))
		default:
			line = theme.Cut(line, m.width)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
