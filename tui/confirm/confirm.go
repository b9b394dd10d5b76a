// Package confirm is the yes/no dialog flowtui shows before every action:
// it says what will happen and waits for y or n.
//
// confirm must not carry out the action: it hands the action back to the
// root in DoneMsg, confirmed or not.
package confirm

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// DoneMsg is sent when the dialog closes.
type DoneMsg struct {
	Confirmed bool
	// Action is what the dialog was opened with.
	Action any
}

// Model is the dialog.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	title  string
	body   string
	action any
}

// New asks title (a question) with body (what will happen) about action.
func New(disp *display.Display, km keys.KeyMap, title, body string, action any) Model {
	return Model{disp: disp, keys: km, title: title, body: body, action: action}
}

// Update answers on y, n or esc.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		done := func(yes bool) tea.Cmd {
			a := m.action
			return func() tea.Msg { return DoneMsg{Confirmed: yes, Action: a} }
		}
		switch {
		case key.Matches(k, m.keys.Yes):
			return m, done(true)
		case key.Matches(k, m.keys.No):
			return m, done(false)
		}
	}
	return m, nil
}

// View renders the dialog in a box at most the screen's width.
func (m Model) View() string {
	st := m.disp.Styles
	w := max(20, min(70, m.disp.Width-4))
	var lines []string
	// The title and body may quote stored text (a run's key, an error):
	// escaped for the terminal, line by line.
	lines = append(lines, st.Header.Render(theme.Cut(termtext.Line(m.title), w)), "")
	for _, l := range strings.Split(m.body, "\n") {
		lines = append(lines, wrap(termtext.Line(l), w)...)
	}
	lines = append(lines, "", st.Key.Render("y")+" yes   "+st.Key.Render("n/esc")+" no")
	return st.Dialog.Width(w + 2).Render(strings.Join(lines, "\n"))
}

// wrap breaks a line into lines of at most w cells at spaces. The line's
// indentation (an indented JSON payload's) starts each of them.
func wrap(s string, w int) []string {
	if strings.TrimSpace(s) == "" {
		return []string{""}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	indent = indent[:min(len(indent), w/2)]
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = indent + word
		case len([]rune(cur))+1+len([]rune(word)) <= w:
			cur += " " + word
		default:
			out = append(out, cur)
			cur = indent + word
		}
	}
	out = append(out, cur)
	for i, l := range out {
		out[i] = theme.Cut(l, w)
	}
	return out
}
