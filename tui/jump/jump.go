// Package jump is flowtui's command line, opened with ":": it reads one
// command (`run REF`, `workflow NAME`, `dlq`, `schedules`) as it is typed
// and tells the root where to go with GoMsg.
//
// jump must not read the store or resolve run references: the root does
// that with interp.Engine.ResolveRun, the one reading of a run reference
// the CLI uses too.
package jump

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
)

// The places a command goes to.
const (
	Run       = "run"
	Workflow  = "workflow"
	DLQ       = "dlq"
	Schedules = "schedules"
)

// verbs are the commands, with whether each takes an argument.
var verbs = []struct {
	name string
	arg  string // what the argument is, "" when none
}{
	{Run, "REF"}, {Workflow, "NAME"}, {DLQ, ""}, {Schedules, ""},
}

// GoMsg asks the root to go somewhere: Verb is one of the constants, Arg
// the run reference or workflow name.
type GoMsg struct{ Verb, Arg string }

// CloseMsg says the command line closed without a command.
type CloseMsg struct{}

// Model is the command line.
type Model struct {
	disp *display.Display
	text string
	err  string // why the last enter was refused
}

// New returns an empty command line.
func New(disp *display.Display) Model { return Model{disp: disp} }

// Parse reads a command line into where it goes, or says what is wrong
// with it and what the commands are.
func Parse(line string) (GoMsg, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return GoMsg{}, fmt.Errorf("type a command: %s", Usage())
	}
	for _, v := range verbs {
		if f[0] != v.name && !(len(f[0]) >= 2 && strings.HasPrefix(v.name, f[0])) {
			continue
		}
		switch {
		case v.arg == "" && len(f) > 1:
			return GoMsg{}, fmt.Errorf(":%s takes nothing after it", v.name)
		case v.arg != "" && len(f) != 2:
			return GoMsg{}, fmt.Errorf(":%s takes one %s, as in :%s %s", v.name, v.arg, v.name, example(v.name))
		}
		msg := GoMsg{Verb: v.name}
		if v.arg != "" {
			msg.Arg = f[1]
		}
		return msg, nil
	}
	return GoMsg{}, fmt.Errorf("unknown command %q: %s", f[0], Usage())
}

func example(verb string) string {
	if verb == Run {
		return "@last"
	}
	return "deploy"
}

// Usage lists the commands.
func Usage() string {
	var out []string
	for _, v := range verbs {
		s := ":" + v.name
		if v.arg != "" {
			s += " " + v.arg
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// Update edits the line; enter sends GoMsg when the line parses, esc
// closes.
func (m Model) Update(k tea.KeyMsg) (Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyEsc:
		return m, func() tea.Msg { return CloseMsg{} }
	case tea.KeyEnter:
		msg, err := Parse(m.text)
		if err != nil {
			m.err = err.Error()
			return m, nil
		}
		return m, func() tea.Msg { return msg }
	case tea.KeyBackspace:
		if r := []rune(m.text); len(r) > 0 {
			m.text = string(r[:len(r)-1])
		}
	case tea.KeyCtrlU:
		m.text = ""
	case tea.KeyRunes, tea.KeySpace:
		m.text += string(k.Runes)
	}
	m.err = ""
	return m, nil
}

// View draws the line, and under it why the last enter was refused or
// what the commands are.
func (m Model) View() string {
	st := m.disp.Styles
	line := ":" + termtext.Line(m.text) + "█"
	if m.err != "" {
		return line + "\n" + st.Error.Render(termtext.Line(m.err))
	}
	return line + "\n" + st.Faint.Render(Usage()+" · run references: ID or prefix, @last, WORKFLOW@last, WORKFLOW/KEY")
}
