package graph

import (
	"fmt"
	"strings"
)

// Text renders g for a terminal: the steps in layers (a step's layer is
// one more than the deepest step it needs), each step a box holding its
// label (as Mermaid's and DOT's), and under it the steps it waits for
// ("← a, b", a switch case in brackets, depends_on marked "(order)").
// status, when not nil, names each step's status (a run's), shown in its
// box. The text is plain (no colour); callers escape it for the terminal.
func Text(g *Graph, status func(step string) string) string {
	steps := renderSteps(g)
	layer := map[string]int{}
	var depth func(s *Step, seen map[string]bool) int
	byName := diffStepMap(g.Steps)
	depth = func(s *Step, seen map[string]bool) int {
		if l, ok := layer[s.Name]; ok {
			return l
		}
		if seen[s.Name] {
			return 0 // a cycle the compiler refused already
		}
		seen[s.Name] = true
		l := 0
		for _, n := range s.Needs {
			if d := byName[n]; d != nil {
				l = max(l, depth(d, seen)+1)
			}
		}
		layer[s.Name] = l
		return l
	}
	last := 0
	for _, s := range steps {
		last = max(last, depth(s, map[string]bool{}))
	}
	into := map[string][]string{}
	for _, e := range renderEdges(g) {
		w := e.from
		switch {
		case e.label != "":
			w += " [" + e.label + "]"
		case e.dashed:
			w += " (order)"
		}
		into[e.to] = append(into[e.to], w)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s version %s: %d steps in %d layers\n", g.Workflow, g.Version, len(steps), last+1)
	for l := 0; l <= last; l++ {
		fmt.Fprintf(&b, "\nlayer %d\n", l+1)
		for _, s := range steps {
			if layer[s.Name] != l {
				continue
			}
			lines := renderLabel(s)
			if status != nil {
				if st := status(s.Name); st != "" {
					lines[0] += "  " + st
				}
			}
			w := 0
			for _, ln := range lines {
				w = max(w, len([]rune(ln)))
			}
			b.WriteString("  ┌" + strings.Repeat("─", w+2) + "┐\n")
			for _, ln := range lines {
				b.WriteString("  │ " + ln + strings.Repeat(" ", w-len([]rune(ln))) + " │\n")
			}
			b.WriteString("  └" + strings.Repeat("─", w+2) + "┘\n")
			if in := into[s.Name]; len(in) > 0 {
				b.WriteString("    ← " + strings.Join(in, ", ") + "\n")
			}
		}
	}
	return b.String()
}
