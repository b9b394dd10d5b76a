package graph

// exprVisitor is called with every expression of a graph, the step that
// holds it (nil for the workflow's) and its slot: the scope it was checked
// in, named as lang/expr names its slots (SlotWhen, SlotData, ...). The
// walk itself is generated from the slot= tags of the fields (ir_gen.go).
type exprVisitor func(e *Expr, s *Step, slot string)

// WalkExprs calls fn with every expression of g (the run key, the
// concurrency key, every expression of every step, of its action's values,
// of the outputs, alerts, schedules and webhooks, including those inside
// templates), the step that holds it (nil for the workflow's) and the slot
// it was checked in (an expr.Slot* name). Expressions are visited in the
// order of the fields of the IR; the elements of a value's object in no
// particular order.
func WalkExprs(g *Graph, fn func(e *Expr, s *Step, slot string)) {
	exprVisitor(fn).graph(g, nil, "")
}
