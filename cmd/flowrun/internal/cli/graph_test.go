package cli

import (
	"strings"
	"testing"
)

// A run's graph on a terminal: each status word is coloured (green,
// red, blue, yellow as flowtui's), the boxes stay aligned, and nothing
// else is touched.
func TestColorStatuses(t *testing.T) {
	in := "  ┌────────────────────┐\n  │ a  completed       │\n  │ set                │\n  └────────────────────┘\n  │ b  failed │\n  │ completed is a word │\n"
	got := colorStatuses(in)
	for _, want := range []string{"│ a  \x1b[32mcompleted\x1b[0m       │", "│ b  \x1b[31mfailed\x1b[0m │"} {
		if !strings.Contains(got, want) {
			t.Errorf("colorStatuses lacks %q:\n%q", want, got)
		}
	}
	if !strings.Contains(got, "│ completed is a word │") || strings.Count(got, "\x1b[") != 4 {
		t.Errorf("colorStatuses touched more than the status words:\n%q", got)
	}
	if strip := strings.NewReplacer("\x1b[32m", "", "\x1b[31m", "", "\x1b[0m", "").Replace(got); strip != in {
		t.Errorf("without its codes the text changed:\n%q", strip)
	}
}
