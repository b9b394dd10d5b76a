// Package theme owns how flowtui looks: the styles (colour or plain,
// honouring NO_COLOR) and the small formatting helpers (status icons,
// durations, countdowns, progress bars, cutting text to a width) that must
// look the same on every screen. What the components share at run time
// (the size, these styles, the clock) is tui/display.
//
// theme must not read the store, hold state, read a clock or start
// goroutines.
package theme

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are the lipgloss styles of the interface. With NoColor they carry
// bold and reverse only, so the screen reads well without colour.
type Styles struct {
	NoColor bool

	Title    lipgloss.Style
	Header   lipgloss.Style // column headers
	Selected lipgloss.Style // the row under the cursor
	Faint    lipgloss.Style
	Key      lipgloss.Style // a key in the help bar
	Error    lipgloss.Style
	Warning  lipgloss.Style
	Info     lipgloss.Style
	Banner   lipgloss.Style // the blocked-run banner
	Dialog   lipgloss.Style // the border of a confirm or input dialog
	BarFull  lipgloss.Style
	BarEmpty lipgloss.Style

	Status map[string]lipgloss.Style // by run or step status
}

// For returns the styles that render for out: a renderer of its own on
// out, in the plain profile when noColor (callers pass true when NO_COLOR
// is set).
func For(out io.Writer, noColor bool) *Styles {
	r := lipgloss.NewRenderer(out)
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	return NewStyles(r, noColor)
}

// NewStyles builds the styles on renderer r.
func NewStyles(r *lipgloss.Renderer, noColor bool) *Styles {
	c := func(s string) lipgloss.TerminalColor {
		if noColor {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(s)
	}
	s := &Styles{NoColor: noColor}
	s.Title = r.NewStyle().Bold(true).Foreground(c("12"))
	s.Header = r.NewStyle().Bold(true)
	s.Selected = r.NewStyle().Reverse(true)
	s.Faint = r.NewStyle().Foreground(c("8"))
	s.Key = r.NewStyle().Bold(true)
	s.Error = r.NewStyle().Bold(true).Foreground(c("9"))
	s.Warning = r.NewStyle().Foreground(c("11"))
	s.Info = r.NewStyle().Foreground(c("14"))
	s.Banner = r.NewStyle().Bold(true).Reverse(noColor).Foreground(c("0")).Background(c("11")).Padding(0, 1)
	s.Dialog = r.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if noColor {
		s.Dialog = s.Dialog.Border(lipgloss.NormalBorder())
	}
	s.BarFull = r.NewStyle().Foreground(c("10"))
	s.BarEmpty = r.NewStyle().Foreground(c("8"))
	green, red, yellow, blue, grey := c("10"), c("9"), c("11"), c("12"), c("8")
	s.Status = map[string]lipgloss.Style{
		"completed": r.NewStyle().Foreground(green),
		"failed":    r.NewStyle().Foreground(red),
		"canceled":  r.NewStyle().Foreground(grey),
		"skipped":   r.NewStyle().Foreground(grey),
		"running":   r.NewStyle().Foreground(blue),
		"waiting":   r.NewStyle().Foreground(yellow),
		"blocked":   r.NewStyle().Bold(true).Foreground(yellow),
		"pending":   r.NewStyle().Foreground(grey),
	}
	return s
}

// StatusStyle returns the style of a run or step status.
func (s *Styles) StatusStyle(status string) lipgloss.Style {
	if st, ok := s.Status[status]; ok {
		return st
	}
	return lipgloss.NewStyle()
}
