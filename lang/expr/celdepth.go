package expr

import (
	"fmt"

	"cel.dev/cel-go/common/ast"
	"github.com/hashicorp/hcl/v2"
)

// MaxCELNesting is how deeply a CEL expression may nest list and map
// literals and comprehensions (all, exists, map, filter) inside each other
// (language.md §15). cel-go's parser stops at 250 levels of any kind, but
// its type checker spends time that grows with a high power of the depth
// of such literals (seconds at 200 levels of maps, for one expression), so
// a file of them would hold validate for hours. Real expressions nest a
// few levels.
const MaxCELNesting = 32

// checkCELNesting reports the first literal or comprehension of e nested
// past MaxCELNesting, or nil. The walk recurses once per AST level, which
// the parser's own limit keeps to a few hundred.
func checkCELNesting(e ast.Expr, src string, loc ExprLoc, info *ast.SourceInfo) hcl.Diagnostics {
	var over ast.Expr
	var walk func(e ast.Expr, depth int)
	walk = func(e ast.Expr, depth int) {
		if over != nil || e == nil {
			return
		}
		switch e.Kind() {
		case ast.ListKind, ast.MapKind, ast.StructKind, ast.ComprehensionKind:
			depth++
			if depth > MaxCELNesting {
				over = e
				return
			}
		}
		switch e.Kind() {
		case ast.CallKind:
			c := e.AsCall()
			if c.IsMemberFunction() {
				walk(c.Target(), depth)
			}
			for _, a := range c.Args() {
				walk(a, depth)
			}
		case ast.SelectKind:
			walk(e.AsSelect().Operand(), depth)
		case ast.ListKind:
			for _, x := range e.AsList().Elements() {
				walk(x, depth)
			}
		case ast.MapKind:
			for _, en := range e.AsMap().Entries() {
				me := en.AsMapEntry()
				walk(me.Key(), depth)
				walk(me.Value(), depth)
			}
		case ast.StructKind:
			for _, f := range e.AsStruct().Fields() {
				walk(f.AsStructField().Value(), depth)
			}
		case ast.ComprehensionKind:
			c := e.AsComprehension()
			walk(c.IterRange(), depth)
			walk(c.AccuInit(), depth)
			walk(c.LoopCondition(), depth)
			walk(c.LoopStep(), depth)
			walk(c.Result(), depth)
		}
	}
	walk(e, 0)
	if over == nil {
		return nil
	}
	rng := loc.exprRange(src, info, over.ID())
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Expression nests too deep",
		Detail: fmt.Sprintf("This expression nests lists, maps and comprehensions (all, exists, map, filter) more than %d levels deep. "+
			"Flatten it; deep data belongs in an input or a step's output.", MaxCELNesting),
		Subject: rng.Ptr(),
	}}
}
