package theme

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// coloured is every style that carries a colour, by name.
func coloured(s *Styles) map[string]lipgloss.Style {
	m := map[string]lipgloss.Style{"Title": s.Title, "Faint": s.Faint, "Error": s.Error, "Warning": s.Warning,
		"Info": s.Info, "BarFull": s.BarFull, "BarEmpty": s.BarEmpty}
	for k, v := range s.Status {
		m["Status "+k] = v
	}
	return m
}

// TestAdaptiveColors: each coloured style draws in another shade on a
// light background than on a dark one, and in colour on both.
func TestAdaptiveColors(t *testing.T) {
	styles := func(dark bool) *Styles {
		r := lipgloss.NewRenderer(&bytes.Buffer{})
		r.SetColorProfile(termenv.ANSI256)
		r.SetHasDarkBackground(dark)
		return NewStyles(r, false)
	}
	light, dark := coloured(styles(false)), coloured(styles(true))
	for name, l := range light {
		lv, dv := l.Render("x"), dark[name].Render("x")
		if !strings.Contains(lv, "\x1b[") || !strings.Contains(dv, "\x1b[") {
			t.Errorf("%s is not coloured: light %q, dark %q", name, lv, dv)
		}
		if lv == dv {
			t.Errorf("%s draws the same on light and dark backgrounds: %q", name, lv)
		}
	}
}

// TestNoColorHasNoEscapes: with NO_COLOR every style, the banner and the
// dialog border too, draws plain text: no SGR sequence, not even bold or
// reverse.
func TestNoColorHasNoEscapes(t *testing.T) {
	s := For(&bytes.Buffer{}, true)
	all := coloured(s)
	for k, v := range map[string]lipgloss.Style{"Header": s.Header, "Selected": s.Selected, "Key": s.Key,
		"Banner": s.Banner, "Dialog": s.Dialog} {
		all[k] = v
	}
	for name, st := range all {
		if v := st.Render("x"); strings.Contains(v, "\x1b") {
			t.Errorf("%s draws an escape sequence under NO_COLOR: %q", name, v)
		}
	}
}

// sgr matches one SGR sequence and captures its parameters.
var sgr = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// TestNoColorOnTerminalKeepsReverse: on a terminal, NO_COLOR draws no
// colour parameter (30-49, 90-107) but keeps reverse on the row under the
// cursor and bold on the title, so the cursor still shows.
func TestNoColorOnTerminalKeepsReverse(t *testing.T) {
	s := forOutput(&bytes.Buffer{}, true, true)
	if v := s.Selected.Render("row"); !strings.Contains(v, "\x1b[7m") {
		t.Errorf("the selected row is not reversed under NO_COLOR: %q", v)
	}
	all := coloured(s)
	all["Selected"], all["Banner"], all["Dialog"] = s.Selected, s.Banner, s.Dialog
	for name, st := range all {
		for _, m := range sgr.FindAllStringSubmatch(st.Render("x"), -1) {
			for _, p := range strings.Split(m[1], ";") {
				if n, _ := strconv.Atoi(p); (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
					t.Errorf("%s draws colour %q under NO_COLOR", name, m[0])
				}
			}
		}
	}
}
