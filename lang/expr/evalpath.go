package expr

import "cel.dev/cel-go/common/ast"

// pathRoots are the variables whose plain selections (input.base,
// steps.fetch.output.id) Eval reads without running the expression's CEL
// program: the values it binds for them are the JSON-like values the
// program would return.
var pathRoots = map[string]bool{"input": true, "steps": true, "run": true, "item": true}

// selectPath returns the selection e is when it is nothing else, a
// variable of pathRoots followed by field names (no index, no has()), as
// the variable and then the fields; otherwise nil.
func selectPath(e ast.Expr, declared func(string) bool) []string {
	var rev []string
	for e.Kind() == ast.SelectKind {
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil
		}
		rev = append(rev, sel.FieldName())
		e = sel.Operand()
	}
	if e.Kind() != ast.IdentKind || len(rev) == 0 || !pathRoots[e.AsIdent()] || !declared(e.AsIdent()) {
		return nil
	}
	path := make([]string, 0, len(rev)+1)
	path = append(path, e.AsIdent())
	for i := len(rev) - 1; i >= 0; i-- {
		path = append(path, rev[i])
	}
	return path
}

// evalPath reads c's path from the variables vars binds. It reports false
// when the path does not lead to a scalar (a missing field, a null on the
// way, a list or map at its end): the CEL program then evaluates the
// expression over the same vars, which keep the variable already bound,
// with its own error or its own copy of the value.
func (c *compiled) evalPath(vars *lazyVars) (any, bool) {
	v, ok := vars.ResolveName(c.path[0])
	if !ok {
		return nil, false
	}
	for _, f := range c.path[1:] {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, false
		}
		if v, ok = m[f]; !ok {
			return nil, false
		}
	}
	switch v.(type) {
	case nil, bool, int64, float64, string:
		return v, true
	}
	return nil, false
}
