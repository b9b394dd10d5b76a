// Package step is flowtui's step view: one step key of a run with its
// status, attempts, output, error, the tail of its stdout and stderr, and
// the step's events, in a scrolling pane.
//
// step must not read the store or act: it renders what the root gives it.
package step

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// tailLines is how many lines of stdout and stderr the view shows.
const tailLines = 10

// Model is the step view.
type Model struct {
	disp *display.Display
	keys keys.KeyMap
	vp   viewport.Model

	runID    string
	key      string
	row      *store.Step
	attempts []store.Attempt
	events   []store.Event
}

// New returns an empty step view.
func New(disp *display.Display, km keys.KeyMap) Model {
	vp := viewport.New(80, 20)
	vp.KeyMap.Up.SetKeys(km.Up.Keys()...)
	vp.KeyMap.Down.SetKeys(km.Down.Keys()...)
	vp.KeyMap.PageUp.SetKeys(km.PageUp.Keys()...)
	vp.KeyMap.PageDown.SetKeys(km.PageDown.Keys()...)
	vp.KeyMap.HalfPageUp.SetEnabled(false)
	vp.KeyMap.HalfPageDown.SetEnabled(false)
	vp.KeyMap.Left.SetEnabled(false)
	vp.KeyMap.Right.SetEnabled(false)
	return Model{disp: disp, keys: km, vp: vp}
}

// SetSize sets the area the view draws in.
func (m *Model) SetSize(width, height int) {
	rerender := m.vp.Width != width
	m.vp.Width, m.vp.Height = width, max(1, height)
	if rerender {
		m.render()
	}
}

// Key returns the run id and step key shown.
func (m Model) Key() (runID, stepKey string) { return m.runID, m.key }

// Open shows a step key of a run; attempts arrive with SetAttempts.
func (m *Model) Open(runID, key string) {
	m.runID, m.key, m.row, m.attempts, m.events = runID, key, nil, nil, nil
	m.vp.GotoTop()
}

// SetDetail takes the step's row and events from its run.
func (m *Model) SetDetail(d *feed.RunDetail) {
	if d == nil || d.Run.ID != m.runID {
		return
	}
	m.row = nil
	for i := range d.Steps {
		if d.Steps[i].Key == m.key {
			m.row = &d.Steps[i]
		}
	}
	m.events = feed.StepEvents(d.Events, m.key)
	m.render()
}

// SetAttempts sets the step's attempts.
func (m *Model) SetAttempts(as []store.Attempt) {
	m.attempts = as
	m.render()
}

// Update scrolls.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	return m, cmd
}

// View renders the pane.
func (m Model) View() string { return m.vp.View() }

// render rebuilds the pane's text; it keeps the scroll position. Every
// stored text is escaped for the terminal (termtext) before it is styled:
// output, errors and events hold what programs wrote.
func (m *Model) render() {
	st := m.disp.Styles
	now := m.disp.Clock.Now()
	var b strings.Builder
	section := func(title string) { b.WriteString("\n" + st.Header.Render(title) + "\n") }

	status := store.StepPending
	if m.row != nil {
		status = m.row.Status
	}
	b.WriteString(st.Title.Render("step "+termtext.Line(m.key)) + "  " + st.StatusStyle(string(status)).Render(theme.Icon(string(status))+" "+string(status)))
	b.WriteString("  " + st.Faint.Render("run "+termtext.Line(m.runID)) + "\n")
	if m.row == nil {
		b.WriteString("The step has not started.\n")
	} else {
		var facts []string
		if m.row.Attempts > 0 {
			facts = append(facts, fmt.Sprintf("%d attempt(s)", m.row.Attempts))
		}
		if d := theme.Span(m.row.StartedAt, m.row.FinishedAt, now); d != "" {
			facts = append(facts, "took "+d)
		}
		if m.row.Detail != "" && !m.row.Status.Terminal() {
			facts = append(facts, m.row.Detail)
		}
		if !m.row.WakeAt.IsZero() && !m.row.Status.Terminal() {
			facts = append(facts, "wakes "+theme.Countdown(m.row.WakeAt, now))
		}
		b.WriteString(termtext.Line(strings.Join(facts, " · ")) + "\n")
	}

	if len(m.attempts) > 0 {
		section("ATTEMPTS")
		for _, a := range m.attempts {
			line := fmt.Sprintf("#%d %s %s", a.Attempt, theme.Icon(string(a.Status)), a.Status)
			if d := theme.Span(a.StartedAt, a.FinishedAt, now); d != "" {
				line += " · " + d
			}
			if msg := errMessage(a.Error); msg != "" {
				line += " · " + msg
			}
			b.WriteString(line + "\n")
		}
	}

	var out, errRaw json.RawMessage
	if m.row != nil {
		out, errRaw = m.row.Output, m.row.Error
	}
	if n := len(m.attempts); n > 0 {
		last := m.attempts[n-1]
		if len(out) == 0 || string(out) == "null" {
			out = last.Output
		}
		if len(errRaw) == 0 || string(errRaw) == "null" {
			errRaw = last.Error
		}
	}
	if s := pretty(out); s != "" {
		section("OUTPUT")
		b.WriteString(termtext.Lines(s) + "\n")
	}
	if s := pretty(errRaw); s != "" {
		section("ERROR")
		b.WriteString(st.Error.Render(errMessage(errRaw)) + "\n" + termtext.Lines(s) + "\n")
	}
	stdout, stderr := streams(out), streams(errRaw)
	if stdout.Stdout == "" {
		stdout.Stdout = stderr.Stdout
	}
	if stdout.Stderr == "" {
		stdout.Stderr = stderr.Stderr
	}
	if t := tail(stdout.Stdout, tailLines); t != "" {
		section(fmt.Sprintf("STDOUT (last %d lines)", tailLines))
		b.WriteString(termtext.Lines(t) + "\n")
	}
	if t := tail(stdout.Stderr, tailLines); t != "" {
		section(fmt.Sprintf("STDERR (last %d lines)", tailLines))
		b.WriteString(termtext.Lines(t) + "\n")
	}

	section(fmt.Sprintf("EVENTS (%d)", len(m.events)))
	if len(m.events) == 0 {
		b.WriteString(st.Faint.Render("none yet") + "\n")
	}
	for _, e := range m.events {
		line := e.At.Local().Format("15:04:05.000") + " " + e.Kind
		if e.StepKey != m.key {
			line += " " + e.StepKey
		}
		if len(e.Data) > 0 && string(e.Data) != "null" && string(e.Data) != "{}" {
			line += " " + string(e.Data)
		}
		b.WriteString(termtext.Line(line) + "\n")
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = theme.Cut(l, m.vp.Width)
	}
	m.vp.SetContent(strings.Join(lines, "\n"))
}

// streams reads the stdout and stderr of an exec result, or of the output
// an exec error carries.
func streams(raw json.RawMessage) (s struct{ Stdout, Stderr string }) {
	var v struct {
		Stdout string `json:"stdout"`
		Stderr string `json:"stderr"`
		Output *struct {
			Stdout string `json:"stdout"`
			Stderr string `json:"stderr"`
		} `json:"output"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return s
	}
	s.Stdout, s.Stderr = v.Stdout, v.Stderr
	if v.Output != nil {
		if s.Stdout == "" {
			s.Stdout = v.Output.Stdout
		}
		if s.Stderr == "" {
			s.Stderr = v.Output.Stderr
		}
	}
	return s
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// maxPretty bounds the lines of output and error the view shows.
const maxPretty = 60

// pretty indents JSON, leaving out null, and cuts it at maxPretty lines.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	ls := strings.Split(buf.String(), "\n")
	if len(ls) > maxPretty {
		ls = append(ls[:maxPretty], fmt.Sprintf("… %d more lines (see `flowrun show --json`)", len(ls)-maxPretty))
	}
	return strings.Join(ls, "\n")
}

// errMessage is the message of a {"kind","message"} error on one line,
// escaped for the terminal.
func errMessage(raw json.RawMessage) string { return termtext.Line(errWords(raw)) }

// errWords is errMessage before escaping: feed.ErrorText's words, and
// nothing for what is not a {"kind","message"} error.
func errWords(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return ""
	}
	return feed.ErrorText(raw)
}
