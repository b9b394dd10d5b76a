package graph

import (
	"fmt"
	"strings"
)

// Layer is one layer of a graph as Layers lays it out: the steps whose
// deepest need is in the layer before.
type Layer struct {
	Steps []LayerStep
}

// LayerStep is a step of a Layer: its name, its label (as Mermaid's and
// DOT's: the name, then the action's short form), and the steps it waits
// for ("a", a switch case as "a [case]", depends_on as "a (order)").
type LayerStep struct {
	Name  string
	Label []string
	Waits []string
}

// Layers lays g out in layers: a step's layer is one more than the deepest
// step it needs, and the steps of a layer keep the graph's order. It is
// the layout of Text and of the web dashboard's run graph.
func Layers(g *Graph) []Layer {
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
	last := -1
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
	out := make([]Layer, last+1)
	for _, s := range steps {
		l := layer[s.Name]
		out[l].Steps = append(out[l].Steps, LayerStep{Name: s.Name, Label: renderLabel(s), Waits: into[s.Name]})
	}
	return out
}

// Text renders g for a terminal: the steps in layers (Layers), each step
// a box holding its label, and under it the steps it waits for ("← a,
// b"). status, when not nil, names each step's status (a run's), shown in
// its box. The text is plain (no colour); callers escape it for the
// terminal.
func Text(g *Graph, status func(step string) string) string {
	layers := Layers(g)
	n := 0
	for _, l := range layers {
		n += len(l.Steps)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s version %s: %d steps in %d layers\n", g.Workflow, g.Version, n, max(len(layers), 1))
	for i, l := range layers {
		fmt.Fprintf(&b, "\nlayer %d\n", i+1)
		for _, s := range l.Steps {
			lines := append([]string(nil), s.Label...)
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
			if len(s.Waits) > 0 {
				b.WriteString("    ← " + strings.Join(s.Waits, ", ") + "\n")
			}
		}
	}
	return b.String()
}
