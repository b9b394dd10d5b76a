package expr

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/operators"
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

// checkCost rejects an expression whose worst-case cost is too high.
func checkCost(se *scopeEnv, checked *cel.Ast, p *ParsedExpr, scope *Scope) hcl.Diagnostics {
	if boundedBySize(checked.NativeRep()) {
		return nil
	}
	est, err := se.env.EstimateCost(checked, sizeEstimator{})
	if err != nil {
		return internalDiag(fmt.Errorf("estimating the cost of %q: %w", p.src, err), p.loc)
	}
	if est.Max <= MaxEstimatedCost {
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Expression too expensive",
		Detail: fmt.Sprintf("In the worst case %s costs %s units, over the limit of %d (lists are assumed to hold up to %d elements and strings up to %d bytes). Avoid nesting comprehensions (all, exists, map, filter) over lists that come from inputs or step outputs.",
			scope.what(), costText(est.Max), MaxEstimatedCost, MaxEstimatedElements, MaxEstimatedStringBytes),
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
