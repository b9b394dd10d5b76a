package root

import (
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/tui/feed"
)

// A notice leaves the status bar once it is older than noticeTTL on the
// display's clock (issue 24: "Cancel … requested" stayed for minutes).
func TestNoticeExpires(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(w.b.Engine, ""), w.b)
	m = press(t, m, "c", "y")
	if !strings.Contains(m.View(), "requested") {
		t.Fatalf("no notice after the cancel:\n%s", m.View())
	}
	w.b.Clock.Advance(noticeTTL - time.Millisecond)
	m = send(t, m, PollMsg{})
	if !strings.Contains(m.View(), "requested") {
		t.Fatalf("the notice went before its time:\n%s", m.View())
	}
	w.b.Clock.Advance(time.Millisecond)
	m = send(t, m, PollMsg{})
	if v := m.View(); strings.Contains(v, "requested") || !strings.Contains(v, "live · 3 runs") {
		t.Fatalf("the notice is still shown after %s:\n%s", noticeTTL, v)
	}
}

// The full help lists each key once (issue 24: the step view listed ↑/k
// and ↓/j twice) and ends with the legend of the status icons.
func TestFullHelpOnceWithLegend(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(w.b.Engine, ""), w.b)
	m = press(t, m, "j", "enter", "enter", "?") // a step of the waiting run, full help
	if m.screen != screenStep {
		t.Fatalf("screen %d, want the step view", m.screen)
	}
	v := m.View()
	for _, k := range []string{"↑/k", "↓/j"} {
		if n := strings.Count(v, k); n != 1 {
			t.Errorf("%s is listed %d times:\n%s", k, n, v)
		}
	}
	for _, want := range []string{"legend:", "◷ waiting", "! blocked", "⊘ canceled", "· pending"} {
		if !strings.Contains(v, want) {
			t.Errorf("the full help lacks %q:\n%s", want, v)
		}
	}
	checkSize(t, v)
}
