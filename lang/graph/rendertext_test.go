package graph

import (
	"strings"
	"testing"
)

// TestText: steps in layers by their needs, each boxed with its kind,
// the steps it waits for under it, and a run's statuses when given.
func TestText(t *testing.T) {
	g := &Graph{Workflow: "w", Version: "1.0.0", Steps: []*Step{
		{Name: "fetch", Action: Action{Kind: KindHTTP}},
		{Name: "charge", Needs: []string{"fetch"}, Action: Action{Kind: KindExec}},
		{Name: "label", Needs: []string{"fetch"}, Action: Action{Kind: KindExec}},
		{Name: "ship", Needs: []string{"charge", "label"}, Action: Action{Kind: KindExec}},
	}}
	out := Text(g, func(s string) string {
		if s == "fetch" {
			return "completed"
		}
		return ""
	})
	for _, want := range []string{
		"workflow w version 1.0.0: 4 steps in 3 layers",
		"layer 1\n  ┌",
		"│ fetch (http)  completed │",
		"layer 2\n",
		"│ charge (exec) │\n  └───────────────┘\n    ← fetch\n",
		"layer 3\n",
		"    ← charge, label\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "charge") > strings.Index(out, "layer 3") {
		t.Errorf("charge is drawn after layer 3:\n%s", out)
	}
}
