package theme

import (
	"bytes"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Colours adapt to the terminal's background, and NO_COLOR draws none.
func TestAdaptiveColorsAndNoColor(t *testing.T) {
	render := func(dark, noColor bool) string {
		r := lipgloss.NewRenderer(&bytes.Buffer{})
		r.SetColorProfile(termenv.ANSI256)
		r.SetHasDarkBackground(dark)
		if noColor {
			r.SetColorProfile(termenv.Ascii)
		}
		return NewStyles(r, noColor).StatusStyle("waiting").Render("◷ waiting")
	}
	dark, light := render(true, false), render(false, false)
	if dark == light {
		t.Fatalf("the same colour on dark and light backgrounds: %q", dark)
	}
	if dark == "◷ waiting" || light == "◷ waiting" {
		t.Fatalf("no colour at all: dark %q, light %q", dark, light)
	}
	if plain := render(true, true); plain != "◷ waiting" {
		t.Fatalf("NO_COLOR still draws colour: %q", plain)
	}
}
