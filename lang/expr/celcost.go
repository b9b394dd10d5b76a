package expr

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"github.com/hashicorp/hcl/v2"
)

// Cost limits. CEL counts cost in abstract units, about one per step of
// evaluation: a comparison is 1, a string operation 1 per 10 bytes, one
// iteration of a comprehension the cost of its body.
//
// At compile time each expression's worst case is estimated assuming that
// every list or map it reads holds at most MaxEstimatedElements entries and
// every string at most MaxEstimatedStringBytes bytes. An expression whose
// estimate exceeds MaxEstimatedCost is rejected: a comprehension over one
// such list is accepted, one nested in another over a second list (100,000 ×
// 100,000 iterations) is not.
//
// At run time every evaluation stops with an error once it has spent
// RuntimeCostLimit units, and checks for cancellation of its context every
// InterruptCheckFrequency comprehension iterations.
const (
	MaxEstimatedElements    = 100_000
	MaxEstimatedStringBytes = 1 << 20
	MaxEstimatedCost        = 100_000_000
	RuntimeCostLimit        = 10_000_000
	InterruptCheckFrequency = 100
)

// sizeEstimator bounds the sizes of the variables' lists, maps and strings.
//
// A variable holds a bounded amount of data, so the deeper a value is
// nested in lists and maps, the smaller it is assumed to be: at depth d
// (the number of collections around it), a list or map holds at most
// MaxEstimatedElements / MaxEstimatedElements^d entries and a string at most
// MaxEstimatedStringBytes / MaxEstimatedElements^d bytes (at least 1). So
// input.tags.join(',') is 100,000 strings of 10 bytes, not of 1 MiB each.
type sizeEstimator struct{}

// EstimateSize implements cost.Estimator.
func (sizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	depth := 0
	for _, p := range n.Path() {
		if p == "@items" || p == "@keys" || p == "@values" {
			depth++
		}
	}
	return sizeOf(n.Type(), depth)
}

// scaled divides limit by MaxEstimatedElements once per level of depth.
func scaled(limit uint64, depth int) uint64 {
	for ; depth > 0 && limit > 1; depth-- {
		limit /= MaxEstimatedElements
	}
	return max(limit, 1)
}

func sizeOf(t *types.Type, depth int) *cost.SizeEstimate {
	if t == nil {
		return nil
	}
	strMax := scaled(MaxEstimatedStringBytes, depth)
	elems := scaled(MaxEstimatedElements, depth)
	switch t.Kind() {
	case types.StringKind, types.BytesKind:
		return &cost.SizeEstimate{Min: 0, Max: strMax}
	case types.ListKind:
		return &cost.SizeEstimate{Min: 0, Max: elems, Elem: sizeOf(t.Parameters()[0], depth+1)}
	case types.MapKind:
		return &cost.SizeEstimate{Min: 0, Max: elems, Key: sizeOf(t.Parameters()[0], depth+1), Elem: sizeOf(t.Parameters()[1], depth+1)}
	case types.DynKind, types.AnyKind:
		// An untyped JSON value may be a string or a collection.
		return &cost.SizeEstimate{Min: 0, Max: max(strMax, elems)}
	}
	return nil
}

// EstimateCallCost implements cost.Estimator: the standard estimates.
func (sizeEstimator) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// costOptions are the estimates flowrun puts in place of cel-go's: lists.range
// and the conversions to string of a scalar, whose result cel-go does not
// size (so string(i) in a loop was taken for a string of 1 MiB).
var costOptions = []cost.Option{
	cost.OverloadCostEstimate(overloads.IntToString, scalarString(20)),
	cost.OverloadCostEstimate(overloads.UintToString, scalarString(20)),
	cost.OverloadCostEstimate(overloads.DoubleToString, scalarString(32)),
	cost.OverloadCostEstimate(overloads.BoolToString, scalarString(5)),
	cost.OverloadCostEstimate("lists_range", rangeEstimate),
}

// scalarString estimates the conversion of a scalar to a string of at most
// n bytes: one unit, and a result of 0..n bytes.
func scalarString(n uint64) cost.FunctionEstimator {
	return func(cost.Estimator, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
		return cost.NewCallEstimate(cost.FixedCostEstimate(1), &cost.SizeEstimate{Min: 1, Max: n})
	}
}

// rangeEstimate replaces the estimate of lists.range(n). cel-go's model
// sizes the list by n, which the compiler cannot bound unless n is a
// literal, so the estimate of lists.range(int(input.shards)) was unbounded
// and the expression refused. The list has at most MaxEstimatedElements
// elements (a larger n is an evaluation error: the base environment sets
// ext.ListsMaxRangeSize), like any other list the estimate assumes; making
// it costs about one unit per element.
func rangeEstimate(_ cost.Estimator, _ *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	lo, hi := uint64(0), uint64(MaxEstimatedElements)
	if len(args) == 1 && args[0].Expr().Kind() == ast.LiteralKind {
		if n, ok := args[0].Expr().AsLiteral().(types.Int); ok && n >= 0 {
			lo, hi = uint64(n), min(uint64(n), MaxEstimatedElements)
			lo = min(lo, hi)
		}
	}
	return cost.NewCallEstimate(cost.RangedCostEstimate(1+lo, 1+hi),
		&cost.SizeEstimate{Min: lo, Max: hi, Elem: &cost.SizeEstimate{Min: 1, Max: 1}})
}

// checkCost rejects an expression whose worst-case cost is too high.
func checkCost(se *scopeEnv, checked *cel.Ast, p *ParsedExpr, scope *Scope) hcl.Diagnostics {
	if boundedBySize(checked.NativeRep()) {
		return nil
	}
	est, err := se.env.EstimateCost(checked, sizeEstimator{}, costOptions...)
	if err != nil {
		return internalDiag(fmt.Errorf("estimating the cost of %q: %w", p.src, err), p.loc)
	}
	if est.Max <= MaxEstimatedCost {
		return nil
	}
	fix := "Avoid nesting comprehensions (all, exists, map, filter) over lists that come from inputs or step outputs."
	switch {
	case comprehensionDepth(checked.NativeRep().Expr()) < 2 && len(costlyCalls(checked.NativeRep().Expr())) > 0:
		// No loop in a loop: the cost is a call's, which grows faster than
		// the size of what it reads. Name it.
		fix = fmt.Sprintf("It nests no comprehensions: the cost comes from %s, which costs more than one pass over a list or string of that size. Call it on a bounded value (a literal, or a list or string cut to a known size), or do the work in an exec step.",
			quoteCalls(costlyCalls(checked.NativeRep().Expr())))
	case comprehensionDepth(checked.NativeRep().Expr()) < 2:
		fix = "It nests no comprehensions: the cost comes from an operation on strings or lists whose size the compiler assumes to be the largest allowed. Work on a bounded value, or do the work in an exec step."
	}
	if est.Max == ^uint64(0) {
		// Unbounded: not the product of list sizes, which are bounded, but
		// a call whose cost grows with a value the compiler cannot bound.
		fix = "A call in it costs in proportion to a number or size the compiler cannot bound (such as a repeat count or a size computed from inputs or step outputs); bound that value, or compute the result in a step."
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Expression too expensive",
		Detail: fmt.Sprintf("In the worst case %s costs %s units, over the limit of %d (lists are assumed to hold up to %d elements and strings up to %d bytes). %s",
			scope.what(), costText(est.Max), MaxEstimatedCost, MaxEstimatedElements, MaxEstimatedStringBytes, fix),
		Subject: p.loc.rangeOf(0, len(p.src)).Ptr(),
	}}
}

// scalarOps are the operators whose cost does not depend on the size of
// their operands when these are numbers, bools or null.
var scalarOps = map[string]bool{
	operators.Less: true, operators.LessEquals: true, operators.Greater: true, operators.GreaterEquals: true,
	operators.Equals: true, operators.NotEquals: true,
	operators.Add: true, operators.Subtract: true, operators.Multiply: true, operators.Divide: true, operators.Modulo: true,
	operators.Negate: true, operators.LogicalNot: true, operators.LogicalAnd: true, operators.LogicalOr: true,
}

// boundedBySize reports whether a checked expression costs at most a few
// units per node, so that it cannot reach MaxEstimatedCost (an expression
// has at most 100,000 nodes, cel-go's limit) and need not be estimated: it
// has no comprehension, and calls only scalarOps on numbers, bools and
// null, and conditionals. Identifiers, selections, literals and list, map
// and object literals cost a constant each.
func boundedBySize(a *ast.AST) bool {
	ok := true
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		if !ok {
			return
		}
		switch e.Kind() {
		case ast.ComprehensionKind, ast.UnspecifiedExprKind:
			ok = false
		case ast.CallKind:
			c := e.AsCall()
			fn := c.FunctionName()
			if c.IsMemberFunction() || (fn != operators.Conditional && !scalarOps[fn]) {
				ok = false
				return
			}
			for _, arg := range c.Args() {
				if fn != operators.Conditional && !scalar(a.GetType(arg.ID())) {
					ok = false
					return
				}
				walk(arg)
			}
		case ast.SelectKind:
			walk(e.AsSelect().Operand())
		case ast.ListKind:
			for _, el := range e.AsList().Elements() {
				walk(el)
			}
		case ast.MapKind:
			for _, ent := range e.AsMap().Entries() {
				walk(ent.AsMapEntry().Key())
				walk(ent.AsMapEntry().Value())
			}
		case ast.StructKind:
			for _, f := range e.AsStruct().Fields() {
				walk(f.AsStructField().Value())
			}
		}
	}
	walk(a.Expr())
	return ok
}

// scalar reports whether values of a checked type have a constant size.
func scalar(t *types.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind, types.NullTypeKind:
		return true
	}
	return false
}

func costText(n uint64) string {
	if n == ^uint64(0) {
		return "an unbounded number of"
	}
	return fmt.Sprintf("%d", n)
}

// comprehensionDepth is the deepest nesting of comprehensions (all,
// exists, map, filter …) in e.
func comprehensionDepth(e ast.Expr) int {
	deepest := 0
	var walk func(e ast.Expr, d int)
	walk = func(e ast.Expr, d int) {
		deepest = max(deepest, d)
		switch e.Kind() {
		case ast.ComprehensionKind:
			c := e.AsComprehension()
			walk(c.IterRange(), d)
			walk(c.AccuInit(), d)
			walk(c.LoopCondition(), d+1)
			walk(c.LoopStep(), d+1)
			walk(c.Result(), d)
		case ast.CallKind:
			c := e.AsCall()
			if c.IsMemberFunction() {
				walk(c.Target(), d)
			}
			for _, a := range c.Args() {
				walk(a, d)
			}
		case ast.SelectKind:
			walk(e.AsSelect().Operand(), d)
		case ast.ListKind:
			for _, el := range e.AsList().Elements() {
				walk(el, d)
			}
		case ast.MapKind:
			for _, en := range e.AsMap().Entries() {
				walk(en.AsMapEntry().Key(), d)
				walk(en.AsMapEntry().Value(), d)
			}
		}
	}
	walk(e, 0)
	return deepest
}

// superlinear are the functions whose cost grows faster than the size of
// their operands (a sort, a pairwise comparison, a replacement that can
// grow the string, a join of many long strings).
var superlinear = map[string]bool{
	"sort": true, "sortBy": true, "distinct": true, "replace": true, "join": true,
	"sets.contains": true, "sets.equivalent": true, "sets.intersects": true,
}

// costlyCalls lists the superlinear functions e calls, in source order,
// each once.
func costlyCalls(e ast.Expr) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e.Kind() {
		case ast.CallKind:
			c := e.AsCall()
			if c.IsMemberFunction() {
				walk(c.Target())
			}
			for _, a := range c.Args() {
				walk(a)
			}
			if f := c.FunctionName(); superlinear[f] && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		case ast.ComprehensionKind:
			c := e.AsComprehension()
			walk(c.IterRange())
			walk(c.LoopStep())
			walk(c.Result())
		case ast.SelectKind:
			walk(e.AsSelect().Operand())
		case ast.ListKind:
			for _, el := range e.AsList().Elements() {
				walk(el)
			}
		}
	}
	walk(e)
	return out
}

func quoteCalls(fs []string) string {
	q := make([]string, len(fs))
	for i, f := range fs {
		q[i] = f + "()"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
