package theme

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Icon returns the one-cell icon of a run or step status. Icons differ in
// shape, not only in colour, so they read without colour too.
func Icon(status string) string {
	switch status {
	case "completed":
		return "✓"
	case "failed":
		return "✗"
	case "canceled":
		return "⊘"
	case "skipped":
		return "↷"
	case "running":
		return "▶"
	case "waiting":
		return "◷"
	case "blocked":
		return "!"
	case "pending":
		return "·"
	case "interrupted":
		return "↯"
	}
	return "?"
}

// legendOrder is the order of the legend.
var legendOrder = []string{"running", "waiting", "blocked", "pending", "completed", "failed", "canceled", "skipped", "interrupted"}

// Legend lists every status icon with its word, in the status colours,
// in lines of at most width cells that never part an icon from its word:
// what the full help shows under "?".
func Legend(s *Styles, width int) string {
	var lines []string
	line, n := "legend:", len("legend:")
	for _, w := range legendOrder {
		item := s.StatusStyle(w).Render(Icon(w)) + " " + w
		if iw := 2 + 1 + 1 + len(w); n+iw > width {
			lines = append(lines, line)
			line, n = " "+item, 1+iw-2
		} else {
			line, n = line+"  "+item, n+iw
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// Duration renders d compactly: "850ms", "12s", "3m05s", "2h04m", "3d02h".
// A negative duration renders as "0s".
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Span is the duration from start to end, or to now when end is zero; ""
// when start is zero (it has not started).
func Span(start, end, now time.Time) string {
	if start.IsZero() {
		return ""
	}
	if end.IsZero() {
		end = now
	}
	return Duration(end.Sub(start))
}

// Countdown renders how long until at, "in 12s", or "due" once it passed.
func Countdown(at, now time.Time) string {
	if at.IsZero() {
		return ""
	}
	if !now.Before(at) {
		return "due now"
	}
	return "in " + Duration(at.Sub(now).Round(time.Second))
}

// Bar renders a progress bar of width cells for done of total.
func (s *Styles) Bar(done, total, width int) string {
	if width <= 0 {
		return ""
	}
	full := 0
	if total > 0 {
		full = max(0, min(width, done*width/total))
	}
	return s.BarFull.Render(strings.Repeat("█", full)) + s.BarEmpty.Render(strings.Repeat("░", width-full))
}

// PlainBar is Bar without styles, for a row drawn in one style.
func PlainBar(done, total, width int) string {
	if width <= 0 {
		return ""
	}
	full := 0
	if total > 0 {
		full = min(width, done*width/total)
	}
	return strings.Repeat("█", full) + strings.Repeat("░", width-full)
}

// Fit cuts s to at most width cells (ending in "…" when cut) and pads it
// with spaces to exactly width cells. s may hold ANSI styles.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > width {
		s = ansi.Truncate(s, width, "…")
	}
	if pad := width - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// Cut cuts s to at most width cells, ending in "…" when cut, without
// padding.
func Cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// Lines pads or cuts text to exactly height lines, each cut to width, so a
// screen never scrolls or leaves stale rows behind.
func Lines(text string, width, height int) string {
	if height <= 0 {
		return ""
	}
	ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(ls) > height {
		ls = ls[:height]
	}
	for i, l := range ls {
		ls[i] = Cut(l, width)
	}
	for len(ls) < height {
		ls = append(ls, "")
	}
	return strings.Join(ls, "\n")
}
