package lsp

import (
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The types of what an expression reads, walked field by field on the
// workflow's compiled graph. Unlike the CEL checker, the walk does not
// stop at what the slot may see: completion proposes steps.build.output's
// fields in a step that does not read build yet, since writing the
// reference is what makes build a dependency (language.md §13).

// stepOf returns the step named name in g, or nil.
func stepOf(g *graph.Graph, name string) *graph.Step {
	if g == nil {
		return nil
	}
	for _, s := range g.Steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// rootType is the type of a CEL variable at site in g (nil: unknown).
func rootType(g *graph.Graph, site *lang.Site, name string) *graph.Type {
	switch name {
	case "run":
		return expr.RunType
	case "error":
		return expr.ErrorType
	case "event":
		return expr.EventType
	case "schedule":
		return expr.ScheduleType
	case "body":
		return graph.TypeAny
	case "headers":
		return expr.HeadersType
	case "index", "iteration":
		return graph.TypeInt
	}
	if g == nil {
		return nil
	}
	switch name {
	case "input":
		return expr.InputsType(g)
	case "steps":
		fields := make(map[string]*graph.Type, len(g.Steps))
		for _, s := range g.Steps {
			fields[s.Name] = expr.StepResultType(expr.VisibleOutput(s))
		}
		return graph.ObjectOf(fields)
	case "secrets":
		fields := make(map[string]*graph.Type, len(g.Secrets))
		for _, s := range g.Secrets {
			fields[s.Name] = graph.TypeString
		}
		return graph.ObjectOf(fields)
	case "item":
		if sc := lang.ScopeAt(g, site); sc != nil && sc.Item != nil {
			return sc.Item
		}
	}
	return nil
}

// chainType is the type of the chain names (a root and its fields), nil
// when it is not known.
func chainType(g *graph.Graph, site *lang.Site, names []string) *graph.Type {
	if len(names) == 0 {
		return nil
	}
	t := rootType(g, site, names[0])
	for _, n := range names[1:] {
		if t == nil {
			return nil
		}
		switch t.Kind {
		case graph.KindObject:
			t = t.Fields[n]
		case graph.KindMap:
			t = t.Elem
		case graph.KindAny:
			return graph.TypeAny
		default:
			return nil
		}
	}
	return t
}

// workflowBlock returns the top-level workflow block named name in body.
func workflowBlock(body *hclsyntax.Body, name string) *hclsyntax.Block {
	if body == nil {
		return nil
	}
	for _, b := range body.Blocks {
		if b.Type == "workflow" && len(b.Labels) > 0 && b.Labels[0] == name {
			return b
		}
	}
	return nil
}

// labelled returns the blocks of type t in the workflow block w.
func labelled(w *hclsyntax.Block, t string) []*hclsyntax.Block {
	if w == nil || w.Body == nil {
		return nil
	}
	var out []*hclsyntax.Block
	for _, b := range w.Body.Blocks {
		if b.Type == t && len(b.Labels) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// actionKind is the type of a step block's action block, "" for none.
func actionKind(step *hclsyntax.Block) string {
	if step == nil || step.Body == nil {
		return ""
	}
	for _, b := range step.Body.Blocks {
		switch b.Type {
		case graph.KindExec, graph.KindHTTP, graph.KindSet, graph.KindSleep, graph.KindWait, graph.KindWorkflow, graph.KindFail, graph.KindSwitch:
			return b.Type
		}
	}
	return ""
}
