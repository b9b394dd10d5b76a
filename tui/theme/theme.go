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
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
)

// Styles are the lipgloss styles of the interface. With NoColor they carry
// bold and reverse only (on a terminal; see For), so the screen reads well
// without colour.
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

// For returns the styles that render for out, on a renderer of its own.
// noColor (callers pass true when NO_COLOR is set) draws no colour at all:
// on a terminal the styles keep bold and reverse, which are not colour
// (no-color.org), so the row under the cursor still shows; elsewhere (a
// file, a test's buffer) they draw plain text.
//
// In colour, every colour is adaptive: one shade for a light background
// and one for a dark one. The background is asked of the terminal here,
// once, before a program reads the terminal's input (asked later, the
// terminal's answer would arrive as key presses).
func For(out io.Writer, noColor bool) *Styles {
	f, ok := out.(interface{ Fd() uintptr })
	return forOutput(out, noColor, ok && term.IsTerminal(f.Fd()))
}

func forOutput(out io.Writer, noColor, terminal bool) *Styles {
	r := lipgloss.NewRenderer(out)
	switch {
	case noColor && terminal:
		// termenv reads NO_COLOR as "no escape sequences" (its Ascii
		// profile), which would hide the cursor; the colours are
		// lipgloss.NoColor in NewStyles instead.
		r.SetColorProfile(termenv.ANSI)
	case noColor:
		r.SetColorProfile(termenv.Ascii)
	default:
		r.HasDarkBackground()
	}
	return NewStyles(r, noColor)
}

// Palette is the colours of the interface, each a pair of ANSI colours:
// Light is drawn on a light background, Dark on a dark one. The bright
// colours (9 to 14) wash out on white and the dark ones (1 to 6) sink into
// black, so each role takes the dark shade on light terminals and the
// bright one on dark terminals.
var Palette = struct {
	Accent, Faint, Red, Green, Yellow, Cyan, Blue lipgloss.AdaptiveColor
}{
	Accent: lipgloss.AdaptiveColor{Light: "4", Dark: "12"},
	Faint:  lipgloss.AdaptiveColor{Light: "243", Dark: "245"},
	Red:    lipgloss.AdaptiveColor{Light: "1", Dark: "9"},
	Green:  lipgloss.AdaptiveColor{Light: "2", Dark: "10"},
	Yellow: lipgloss.AdaptiveColor{Light: "130", Dark: "11"},
	Cyan:   lipgloss.AdaptiveColor{Light: "6", Dark: "14"},
	Blue:   lipgloss.AdaptiveColor{Light: "4", Dark: "12"},
}

// NewStyles builds the styles on renderer r.
func NewStyles(r *lipgloss.Renderer, noColor bool) *Styles {
	c := func(a lipgloss.AdaptiveColor) lipgloss.TerminalColor {
		if noColor {
			return lipgloss.NoColor{}
		}
		return a
	}
	p := Palette
	s := &Styles{NoColor: noColor}
	s.Title = r.NewStyle().Bold(true).Foreground(c(p.Accent))
	s.Header = r.NewStyle().Bold(true)
	s.Selected = r.NewStyle().Reverse(true)
	s.Faint = r.NewStyle().Foreground(c(p.Faint))
	s.Key = r.NewStyle().Bold(true)
	s.Error = r.NewStyle().Bold(true).Foreground(c(p.Red))
	s.Warning = r.NewStyle().Foreground(c(p.Yellow))
	s.Info = r.NewStyle().Foreground(c(p.Cyan))
	// The banner is black on yellow whatever the background.
	s.Banner = r.NewStyle().Bold(true).Reverse(noColor).Padding(0, 1)
	if !noColor {
		s.Banner = s.Banner.Foreground(lipgloss.Color("0")).Background(lipgloss.Color("11"))
	}
	s.Dialog = r.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if noColor {
		s.Dialog = s.Dialog.Border(lipgloss.NormalBorder())
	}
	s.BarFull = r.NewStyle().Foreground(c(p.Green))
	s.BarEmpty = r.NewStyle().Foreground(c(p.Faint))
	green, red, yellow, blue, grey := c(p.Green), c(p.Red), c(p.Yellow), c(p.Blue), c(p.Faint)
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
