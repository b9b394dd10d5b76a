// Package signal is flowtui's signal prompt: the name of the signal (filled
// in with the one the run waits for) and a JSON payload typed in, parsed
// as it is typed and checked against the type the wait step declares
// (interp.CheckSignalData, the engine's own check), with what is wrong
// said inline; a payload of the wrong type is not sent.
//
// signal must not send anything: it hands a checked SubmitMsg to the root,
// which confirms and sends it.
package signal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// SubmitMsg carries a checked signal.
type SubmitMsg struct {
	RunID   string
	Name    string
	Payload json.RawMessage
}

// CancelMsg is sent when the prompt is closed without sending.
type CancelMsg struct{}

// Model is the prompt.
type Model struct {
	disp    *display.Display
	keys    keys.KeyMap
	runID   string
	waiting []string
	name    field
	payload field
	focus   int // 0 name, 1 payload
	err     string
	// g is the run's graph, whose wait steps may declare the type of
	// their data; nil when it cannot be read (the engine checks anyway).
	g *graph.Graph
}

// New opens the prompt for a run; waiting lists the signals its wait steps
// take (the first fills the name).
func New(disp *display.Display, km keys.KeyMap, runID string, waiting []string, g *graph.Graph) Model {
	name := field{prompt: "signal  ", hint: "approval", limit: 200}
	if len(waiting) > 0 {
		name.set(waiting[0])
	}
	payload := field{prompt: "payload ", hint: `{"approved": true}`, limit: 64 << 10}
	if len(waiting) > 0 && g != nil {
		// A typed wait: open with a payload of its type, to edit.
		if _, ex, ok := interp.SignalExample(g, waiting[0]); ok {
			payload.set(string(ex))
		}
	}
	m := Model{disp: disp, keys: km, runID: runID, waiting: waiting, name: name, payload: payload, g: g}
	if len(waiting) > 0 {
		m.focus = 1
	}
	m.applyFocus()
	return m
}

func (m *Model) applyFocus() {
	m.name.focus, m.payload.focus = m.focus == 0, m.focus == 1
}

// Err returns the message about the last rejected submit, or "".
func (m Model) Err() string { return m.err }

// Update edits the fields; enter checks and submits, esc cancels.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case k.Type == tea.KeyEsc:
			return m, func() tea.Msg { return CancelMsg{} }
		case key.Matches(k, m.keys.Next):
			m.focus = 1 - m.focus
			m.applyFocus()
			return m, nil
		case key.Matches(k, m.keys.Submit):
			sub, err := m.check()
			if err != nil {
				m.err = err.Error()
				return m, nil
			}
			m.err = ""
			return m, func() tea.Msg { return sub }
		}
	}
	if k, ok := msg.(tea.KeyMsg); ok {
		if m.focus == 0 {
			m.name = m.name.update(k)
		} else {
			m.payload = m.payload.update(k)
		}
	}
	return m, nil
}

// check validates the name and the payload.
func (m Model) check() (SubmitMsg, error) {
	name := strings.TrimSpace(m.name.text())
	if name == "" {
		return SubmitMsg{}, problem("Type the name of the signal to send (the wait step's signal).")
	}
	text := strings.TrimSpace(m.payload.text())
	if text == "" {
		text = "{}"
	}
	if strings.ContainsAny(name, "{}\"") {
		return SubmitMsg{}, problem(fmt.Sprintf("A signal name holds no braces or double quotes; %q looks like a payload typed into the name. Put the name in the signal field and the JSON in the payload field (tab moves between them).", name))
	}
	payload, err := CheckPayload(text)
	if err != nil {
		return SubmitMsg{}, err
	}
	if err := m.checkType(name, payload); err != nil {
		return SubmitMsg{}, err
	}
	return SubmitMsg{RunID: m.runID, Name: name, Payload: payload}, nil
}

// checkType checks the payload against the type the run's wait steps
// declare for the signal, with the engine's check.
func (m Model) checkType(name string, payload json.RawMessage) error {
	if m.g == nil {
		return nil
	}
	var de *interp.SignalDataError
	if err := interp.CheckSignalData(m.g, m.runID, name, payload); errors.As(err, &de) {
		return problem(fmt.Sprintf("Step %s takes data of type %s: %s. Type a payload of that type.", de.Step, de.Type, de.Problem))
	} else if err != nil {
		return problem(err.Error())
	}
	return nil
}

// live says what the payload typed so far is: valid JSON of the type the
// wait takes, or what is wrong with it. ok is false when enter would
// refuse it.
func (m Model) live() (text string, ok bool) {
	t := strings.TrimSpace(m.payload.text())
	if t == "" {
		return "empty: {} is sent", m.checkType(strings.TrimSpace(m.name.text()), json.RawMessage("{}")) == nil
	}
	p, err := CheckPayload(t)
	if err != nil {
		return "not valid JSON yet", false
	}
	if err := m.checkType(strings.TrimSpace(m.name.text()), p); err != nil {
		return err.Error(), false
	}
	return "valid JSON: " + clip(string(p), 50), true
}

// Payload is the payload a submit would send now, checked, or the reason
// it would be refused.
func (m Model) Payload() (json.RawMessage, error) {
	sub, err := m.check()
	return sub.Payload, err
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// problem is a message for the person typing, written as a sentence.
type problem string

func (p problem) Error() string { return string(p) }

// CheckPayload checks that text is one JSON value and returns it compacted,
// or an error that says where it goes wrong and how to fix it.
func CheckPayload(text string) (json.RawMessage, error) {
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // an integer past 2^53 keeps its digits
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("there is more after the first value")
	}
	if err != nil {
		var se *json.SyntaxError
		where, why := "", strings.TrimPrefix(err.Error(), "json: ")
		if errors.As(err, &se) {
			where = fmt.Sprintf(" at character %d", se.Offset)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			why = "it ends before the value is complete"
		}
		return nil, problem(fmt.Sprintf("The payload is not valid JSON%s (%s). Type one JSON value such as {\"approved\": true}, or leave it empty to send {}.", where, why))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, problem(fmt.Sprintf("The payload cannot be encoded as JSON: %v.", err))
	}
	return b, nil
}

// View renders the prompt.
func (m Model) View() string {
	st := m.disp.Styles
	w := max(20, min(70, m.disp.Width-4))
	lines := []string{st.Header.Render("Send a signal to run " + m.runID)}
	if len(m.waiting) > 0 {
		lines = append(lines, theme.Cut("The run waits for: "+termtext.Line(strings.Join(m.waiting, ", ")), w))
	} else {
		lines = append(lines, theme.Cut("No step of this run is waiting for a signal now.", w))
	}
	lines = append(lines, "", m.name.view(st, w), m.payload.view(st, w))
	if live, ok := m.live(); ok {
		lines = append(lines, st.Faint.Render(theme.Cut("        ✓ "+termtext.Line(live), w)))
	} else {
		for i, l := range wrapWords("✗ "+termtext.Line(live), w-10) {
			if i == 0 && m.err == "" {
				lines = append(lines, st.Warning.Render("        "+l))
			} else if m.err == "" {
				lines = append(lines, st.Warning.Render("          "+l))
			}
		}
	}
	lines = append(lines, "")
	if m.err != "" {
		for _, l := range wrapWords(termtext.Line(m.err), w) {
			lines = append(lines, st.Error.Render(l))
		}
		lines = append(lines, "")
	}
	// The hint names the field tab goes to, so what is typed after it
	// goes where the hint says (issue 24).
	next := "signal name"
	if m.focus == 0 {
		next = "payload"
	}
	lines = append(lines, st.Key.Render("enter")+" send   "+st.Key.Render("tab")+" to "+next+"   "+st.Key.Render("esc")+" close")
	return st.Dialog.Width(w + 2).Render(strings.Join(lines, "\n"))
}

func wrapWords(s string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && len([]rune(cur))+1+len([]rune(word)) > w {
			out = append(out, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		out = append(out, theme.Cut(cur, w))
	}
	return out
}
