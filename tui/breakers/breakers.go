// Package breakers is flowtui's breaker view: each circuit breaker's state,
// failures and, for an open one, when it lets a trial through.
//
// breakers must not read the store: the root loads the states through the
// engine (interp.Engine.BreakerList, the store's own rows).
package breakers

import (
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/theme"
)

// Model is the view.
type Model struct {
	disp   *display.Display
	width  int
	height int
	loaded bool
	err    error
	items  []store.Breaker
}

// New returns the view.
func New(disp *display.Display) Model { return Model{disp: disp} }

// SetSize sets the area the view draws in.
func (m *Model) SetSize(width, height int) { m.width, m.height = width, height }

// Set shows freshly loaded states, or the error that loading them gave.
func (m *Model) Set(items []store.Breaker, err error) { m.items, m.err, m.loaded = items, err, true }

// View renders the states.
func (m Model) View() string {
	st := m.disp.Styles
	title := st.Title.Render("Breakers")
	switch {
	case m.err != nil:
		return title + "\n" + st.Error.Render(theme.Cut("Cannot read the breakers: "+termtext.Line(m.err.Error()), m.width))
	case !m.loaded:
		return title + "\n" + st.Faint.Render("Loading…")
	case len(m.items) == 0:
		return title + "\n" + "No breakers."
	}
	now := m.disp.Clock.Now()
	lines := []string{title, st.Header.Render(theme.Fit(fmt.Sprintf("%-24s %-10s %8s  %s", "NAME", "STATE", "FAILURES", "TRIAL"), m.width))}
	for i, b := range m.items {
		if i >= m.height-2 {
			break
		}
		trial := ""
		if b.State == store.BreakerOpen {
			trial = theme.Countdown(b.OpenUntil, now)
		}
		lines = append(lines, theme.Cut(fmt.Sprintf("%-24s %-10s %8d  %s", theme.Cut(termtext.Line(b.Name), 24), termtext.Line(string(b.State)), b.Failures, trial), m.width))
	}
	return strings.Join(lines, "\n")
}
