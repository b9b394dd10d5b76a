package graph

// Rendering a step graph as Mermaid or Graphviz DOT, for `flowrun graph`.
//
// Both renderings show the same thing: one node per step labelled
// `name (kind)` (kind "none" for a join point), with a line per `when`,
// `foreach` and `until` the step has; one edge per need. An edge from a
// switch step to a branch it chooses is labelled with the case condition
// ("default" for the default branch); an explicit depends_on edge is dashed;
// every other edge carries data and is solid. Output is deterministic: nodes
// in the graph's step order, edges by target then source.

import (
	"fmt"
	"strings"
)

// Mermaid renders g as a Mermaid flowchart (top-down). Steps are given ids
// s0, s1, ... in step order, so any step name is safe.
func Mermaid(g *Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%% workflow %s version %s\n", g.Workflow, g.Version)
	b.WriteString("flowchart TD\n")
	ids := map[string]string{}
	for i, s := range renderSteps(g) {
		ids[s.Name] = fmt.Sprintf("s%d", i)
	}
	for _, s := range renderSteps(g) {
		lines := renderLabel(s)
		for i := range lines {
			lines[i] = renderMermaidText(lines[i])
		}
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", ids[s.Name], strings.Join(lines, "<br/>"))
	}
	for _, e := range renderEdges(g) {
		from, to := ids[e.from], ids[e.to]
		switch {
		case e.label != "":
			fmt.Fprintf(&b, "    %s -->|\"%s\"| %s\n", from, renderMermaidText(e.label), to)
		case e.dashed:
			fmt.Fprintf(&b, "    %s -.-> %s\n", from, to)
		default:
			fmt.Fprintf(&b, "    %s --> %s\n", from, to)
		}
	}
	return b.String()
}

// DOT renders g as a Graphviz digraph (top-down). Foreach steps get a
// double border.
func DOT(g *Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", renderDOTString(g.Workflow))
	fmt.Fprintf(&b, "    label=%s;\n", renderDOTString(g.Workflow+" "+g.Version))
	b.WriteString("    labelloc=t;\n    rankdir=TB;\n    node [shape=box];\n")
	for _, s := range renderSteps(g) {
		lines := renderLabel(s)
		for i := range lines {
			lines[i] = renderDOTEscape(lines[i])
		}
		attrs := ""
		if s.Foreach != nil {
			attrs = ", peripheries=2"
		}
		fmt.Fprintf(&b, "    %s [label=\"%s\"%s];\n", renderDOTString(s.Name), strings.Join(lines, `\n`), attrs)
	}
	for _, e := range renderEdges(g) {
		var attrs []string
		if e.label != "" {
			attrs = append(attrs, "label="+renderDOTString(e.label))
		}
		if e.dashed {
			attrs = append(attrs, "style=dashed")
		}
		a := ""
		if len(attrs) > 0 {
			a = " [" + strings.Join(attrs, ", ") + "]"
		}
		fmt.Fprintf(&b, "    %s -> %s%s;\n", renderDOTString(e.from), renderDOTString(e.to), a)
	}
	b.WriteString("}\n")
	return b.String()
}

// renderSteps returns the non-nil steps in graph order.
func renderSteps(g *Graph) []*Step {
	out := make([]*Step, 0, len(g.Steps))
	for _, s := range g.Steps {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// renderLabel returns the lines of a step's label, unescaped.
func renderLabel(s *Step) []string {
	kind := s.Action.Kind
	if kind == KindNone {
		kind = "none"
	}
	lines := []string{fmt.Sprintf("%s (%s)", s.Name, kind)}
	if h := s.Action.HTTP; h != nil && h.OpenAPI != nil {
		lines = append(lines, "openapi: "+renderShort(h.OpenAPI.Operation+" in "+h.OpenAPI.Document))
	}
	if s.When != nil {
		lines = append(lines, "when: "+renderShort(s.When.CEL))
	}
	if s.Foreach != nil && s.Foreach.Items != nil {
		lines = append(lines, "foreach: "+renderShort(s.Foreach.Items.CEL))
	}
	if s.Until != nil && s.Until.Cond != nil {
		lines = append(lines, "until: "+renderShort(s.Until.Cond.CEL))
	}
	return lines
}

// renderEdge is one need of one step.
type renderEdge struct {
	from, to string
	label    string // switch case condition(s), or "default"
	dashed   bool   // depends_on without a switch label
}

// renderEdges returns every need as an edge, in step order of the target.
func renderEdges(g *Graph) []renderEdge {
	byName := diffStepMap(g.Steps)
	var edges []renderEdge
	for _, s := range renderSteps(g) {
		deps := diffSet(s.DependsOn)
		for _, from := range s.Needs {
			e := renderEdge{from: from, to: s.Name}
			if src := byName[from]; src != nil && src.Action.Switch != nil {
				e.label = renderSwitchLabel(src.Action.Switch, s.Name)
			}
			e.dashed = e.label == "" && deps[from]
			edges = append(edges, e)
		}
	}
	return edges
}

// renderSwitchLabel names the cases of sw that choose target, or "" when
// none does (the target reads the switch's output instead).
func renderSwitchLabel(sw *SwitchAction, target string) string {
	var labels []string
	for _, c := range sw.Cases {
		for _, n := range c.Next {
			if n == target && c.When != nil {
				labels = append(labels, renderShort(c.When.CEL))
			}
		}
	}
	for _, n := range sw.Default {
		if n == target {
			labels = append(labels, "default")
		}
	}
	return strings.Join(labels, " | ")
}

// renderShort cuts a CEL source to 40 characters.
func renderShort(s string) string {
	r := []rune(s)
	if len(r) <= 40 {
		return s
	}
	return string(r[:39]) + "…"
}

// renderMermaidText escapes text for a quoted Mermaid label.
func renderMermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "&", "#amp;", "<", "#lt;", ">", "#gt;").Replace(s)
}

// renderDOTEscape escapes text for the inside of a DOT quoted string.
func renderDOTEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// renderDOTString quotes s as a DOT string.
func renderDOTString(s string) string { return `"` + renderDOTEscape(s) + `"` }
