package expr

// The fields of `error` that only some error kinds carry: reading one
// unguarded in retry.when compiles, but fails at run time on an error of
// another kind (or one without it), and an evaluation error of retry.when
// means no retry (spec/semantics.md §6). The compiler warns about such a
// read, at its position, with the guard to write.

import (
	"fmt"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"github.com/hashicorp/hcl/v2"
)

// ErrorFieldKinds says, for each optional field of `error`, which error
// kinds carry it and when (spec/semantics.md §6). message and kind are
// always there.
var ErrorFieldKinds = map[string]string{
	"status":    `only an http error that got a response, or an error raised by a fail step that sets status, has status: a refused connection, a DNS failure, a bad URL or too many redirects has none, nor has an error of another kind (exec, timeout, breaker_open, child)`,
	"exit_code": `only an exec error whose program ran has exit_code: a program that could not start has none, nor has an error of another kind (http, timeout, breaker_open, child)`,
	"title":     `only an error raised by a fail step that sets title has title`,
	"detail":    `only an error raised by a fail step that sets detail has detail`,
	"instance":  `only an error raised by a fail step that sets instance has instance`,
}

// What an evaluation error of retry.when and of catch.when leads to, for
// ErrorFieldWarnings.
const (
	RetryWhenFails = "a retry.when that fails to evaluate means no retry"
	CatchWhenFails = "a catch.when that fails to evaluate does not take the error"
)

// ErrorFieldWarnings returns a warning for every read of an optional field
// of `error` (error.status, error.exit_code) in p that no has() of that
// field guards: the right side of && or || whose left side tests
// has(error.FIELD), or a branch of ?: whose condition does. p must have
// been checked in a scope where error is visible.
//
// then says what an evaluation error of the expression leads to ("a
// retry.when that fails to evaluate means no retry").
func (p *ParsedExpr) ErrorFieldWarnings(then string) hcl.Diagnostics {
	info := p.ast.NativeRep().SourceInfo()
	var diags hcl.Diagnostics
	var walk func(e ast.Expr, guarded map[string]bool)
	walk = func(e ast.Expr, guarded map[string]bool) {
		switch e.Kind() {
		case ast.SelectKind:
			sel := e.AsSelect()
			op := sel.Operand()
			if op.Kind() == ast.IdentKind && op.AsIdent() == "error" {
				f := sel.FieldName()
				if why, ok := ErrorFieldKinds[f]; ok && !sel.IsTestOnly() && !guarded[f] {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagWarning,
						Summary:  fmt.Sprintf("error.%s may be absent", f),
						Detail: fmt.Sprintf("%s. Reading it then fails, and %s. Guard the read: %s.",
							upperFirst(why), then, guardHint(p, f)),
						Subject: hcl.RangeBetween(p.loc.exprRange(p.src, info, op.ID()), p.loc.fieldRange(p.src, info, e.ID())).Ptr(),
					})
				}
				return
			}
			walk(op, guarded)
		case ast.CallKind:
			c := e.AsCall()
			args := c.Args()
			switch c.FunctionName() {
			case operators.LogicalAnd, operators.LogicalOr:
				if len(args) == 2 {
					walk(args[0], guarded)
					walk(args[1], withGuards(guarded, args[0]))
					return
				}
			case operators.Conditional:
				if len(args) == 3 {
					walk(args[0], guarded)
					g := withGuards(guarded, args[0])
					walk(args[1], g)
					walk(args[2], g)
					return
				}
			}
			if c.IsMemberFunction() {
				walk(c.Target(), guarded)
			}
			for _, a := range args {
				walk(a, guarded)
			}
		case ast.ListKind:
			for _, el := range e.AsList().Elements() {
				walk(el, guarded)
			}
		case ast.MapKind:
			for _, en := range e.AsMap().Entries() {
				me := en.AsMapEntry()
				walk(me.Key(), guarded)
				walk(me.Value(), guarded)
			}
		case ast.ComprehensionKind:
			cp := e.AsComprehension()
			walk(cp.IterRange(), guarded)
			walk(cp.AccuInit(), guarded)
			walk(cp.LoopCondition(), guarded)
			walk(cp.LoopStep(), guarded)
			walk(cp.Result(), guarded)
		}
	}
	walk(p.ast.NativeRep().Expr(), map[string]bool{})
	return diags
}

// withGuards adds to guarded the fields of error that cond tests with
// has(error.FIELD).
func withGuards(guarded map[string]bool, cond ast.Expr) map[string]bool {
	var found []string
	var scan func(e ast.Expr)
	scan = func(e ast.Expr) {
		switch e.Kind() {
		case ast.SelectKind:
			sel := e.AsSelect()
			if op := sel.Operand(); sel.IsTestOnly() && op.Kind() == ast.IdentKind && op.AsIdent() == "error" {
				found = append(found, sel.FieldName())
				return
			}
			scan(sel.Operand())
		case ast.CallKind:
			c := e.AsCall()
			if c.IsMemberFunction() {
				scan(c.Target())
			}
			for _, a := range c.Args() {
				scan(a)
			}
		}
	}
	scan(cond)
	if len(found) == 0 {
		return guarded
	}
	out := make(map[string]bool, len(guarded)+len(found))
	for k, v := range guarded {
		out[k] = v
	}
	for _, f := range found {
		out[f] = true
	}
	return out
}

// guardHint is the guarded form of a read of error.f in p: the whole
// expression behind has(error.f) && when it is not itself a && or ||,
// else the pattern to put around the comparison that reads it.
func guardHint(p *ParsedExpr, f string) string {
	top := p.ast.NativeRep().Expr()
	if top.Kind() == ast.CallKind {
		switch top.AsCall().FunctionName() {
		case operators.LogicalAnd, operators.LogicalOr, operators.Conditional:
			return fmt.Sprintf("(has(error.%s) && error.%s …) around the comparison that reads it", f, f)
		}
	}
	return fmt.Sprintf("has(error.%s) && %s", f, p.src)
}
