package expr

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"github.com/flowrun/flowrun/lang/graph"
)

// The check cache of a graph's environments.
//
// In a long workflow most expressions differ only by the steps they read:
// every step of a chain has `steps.PREV.output.v + 1`, PREV's output having
// the type of the step before it. A CEL check is a function of the syntax
// tree (its kinds, names, literals and shape) and of the environment's
// declarations; the name of a field of the steps type enters it only
// through the field's CEL type. So two expressions whose trees are equal
// but for the names NAME of their steps.NAME selections, checked in the same
// environment, where each such field has the same CEL type, check alike:
// the same result type and the same cost. CheckExpr reuses that result
// (checkCached) instead of running the checker again. Only successful
// checks are kept: an expression that fails is checked in full, so its
// diagnostics and their positions are the checker's own.
//
// The shape of an expression (exprShape) is written only for trees of
// identifiers, selections, calls and scalar literals; a list, map, message
// or comprehension (whose variables may shadow steps) is always checked.

// exprShape is an expression's tree with the names of its steps.NAME
// selections left out, and those names in the order the tree holds them.
type exprShape struct {
	key   string
	steps []string
	text  string // the canonical text (cel.AstToString); "" until needed
}

// checkRuns counts the checker's runs (cel.Env.Check), for the tests.
var checkRuns atomic.Int64

// noCheckCache turns the cache off, for the tests that compare compiling
// with and without it.
var noCheckCache atomic.Bool

// shapeOf returns the shape of a parsed tree, or nil when the tree holds
// something shapeOf does not write.
func shapeOf(a *cel.Ast) *exprShape {
	if a == nil {
		return nil
	}
	var b strings.Builder
	sh := &exprShape{}
	if !writeShape(&b, a.NativeRep().Expr(), &sh.steps) {
		return nil
	}
	sh.key = b.String()
	return sh
}

// writeShape writes e in prefix form, each name and literal quoted, so that
// two different trees never write the same text.
func writeShape(b *strings.Builder, e ast.Expr, steps *[]string) bool {
	switch e.Kind() {
	case ast.IdentKind:
		b.WriteString("i")
		b.WriteString(strconv.Quote(e.AsIdent()))
	case ast.SelectKind:
		sel := e.AsSelect()
		op := sel.Operand()
		test := "s"
		if sel.IsTestOnly() {
			test = "t"
		}
		if op.Kind() == ast.IdentKind && op.AsIdent() == "steps" {
			// steps.NAME: the name is left out of the key.
			b.WriteString("S" + test)
			*steps = append(*steps, sel.FieldName())
			return true
		}
		b.WriteString(test)
		b.WriteString(strconv.Quote(sel.FieldName()))
		return writeShape(b, op, steps)
	case ast.CallKind:
		c := e.AsCall()
		b.WriteString("c")
		b.WriteString(strconv.Quote(c.FunctionName()))
		if c.IsMemberFunction() {
			b.WriteString("m")
			if !writeShape(b, c.Target(), steps) {
				return false
			}
		}
		b.WriteString(strconv.Itoa(len(c.Args())))
		for _, a := range c.Args() {
			if !writeShape(b, a, steps) {
				return false
			}
		}
	case ast.LiteralKind:
		switch v := e.AsLiteral().(type) {
		case types.Bool:
			b.WriteString("lb" + strconv.FormatBool(bool(v)))
		case types.Int:
			b.WriteString("li" + strconv.FormatInt(int64(v), 10) + ";")
		case types.Uint:
			b.WriteString("lu" + strconv.FormatUint(uint64(v), 10) + ";")
		case types.Double:
			b.WriteString("ld" + strconv.FormatFloat(float64(v), 'g', -1, 64) + ";")
		case types.String:
			b.WriteString("ls" + strconv.Quote(string(v)))
		case types.Bytes:
			b.WriteString("ly" + strconv.Quote(string(v)))
		case types.Null:
			b.WriteString("ln")
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// keepShape records p's shape and canonical text before its tree is shed,
// so that a check the cache answers needs no new parse.
func (p *ParsedExpr) keepShape() {
	if p.ast == nil || p.shape != nil {
		return
	}
	sh := shapeOf(p.ast)
	if sh == nil {
		return
	}
	text, err := cel.AstToString(p.ast)
	if err != nil {
		return
	}
	sh.text = text
	p.shape = sh
}

// shapeFor returns p's shape: the one kept, or one written from its tree.
func (p *ParsedExpr) shapeFor() *exprShape {
	if p.shape != nil {
		return p.shape
	}
	return shapeOf(p.ast)
}

// checkKey is the cache key of an expression of shape sh checked in se:
// the shape and the CEL type of each steps.NAME field it selects, or ""
// when a field has no type.
func (g *CelGraph) checkKey(se *scopeEnv, sh *exprShape) string {
	var b strings.Builder
	b.WriteString(sh.key)
	for _, n := range sh.steps {
		f := g.stepField(se.stepsName, n)
		if f == nil || f.Type == nil {
			return ""
		}
		b.WriteString("|")
		b.WriteString(strconv.Itoa(g.typeID(f.Type)))
	}
	return b.String()
}

// typeID numbers the CEL types of the graph's steps fields.
func (g *CelGraph) typeID(t *types.Type) int {
	g.mu.RLock()
	id, ok := g.typeIDs[t]
	g.mu.RUnlock()
	if ok {
		return id
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if id, ok := g.typeIDs[t]; ok {
		return id
	}
	id = len(g.typeIDs)
	g.typeIDs[t] = id
	return id
}

// checkCached returns the Expr of p checked in scope against want when an
// expression of the same shape, reading steps of the same types, was
// checked in the same environment; nil when the checker must run.
func checkCached(p *ParsedExpr, scope *Scope, want *graph.Type) *graph.Expr {
	g := scope.Graph
	if g == nil || noCheckCache.Load() || !refsOK(p, scope) {
		return nil
	}
	sh := p.shapeFor()
	if sh == nil {
		return nil
	}
	se, err := g.envFor(scope)
	if err != nil || se == nil {
		return nil
	}
	key := g.checkKey(se, sh)
	if key == "" {
		return nil
	}
	g.mu.RLock()
	rt, ok := g.checks[se][key]
	g.mu.RUnlock()
	if !ok || (want != nil && !rt.AssignableTo(want)) {
		return nil
	}
	text := sh.text
	if text == "" {
		if text, err = cel.AstToString(p.ast); err != nil {
			return nil
		}
	}
	return &graph.Expr{CEL: text, Type: rt}
}

// rememberCheck keeps the result type of p, checked without error in se,
// one of scope's graph's environments.
func rememberCheck(p *ParsedExpr, scope *Scope, se *scopeEnv, rt *graph.Type) {
	g := scope.Graph
	if g == nil || se == nil || se.graph != g || noCheckCache.Load() {
		return
	}
	sh := p.shapeFor()
	if sh == nil {
		return
	}
	key := g.checkKey(se, sh)
	if key == "" {
		return
	}
	g.mu.Lock()
	if g.checks[se] == nil {
		g.checks[se] = map[string]*graph.Type{}
	}
	g.checks[se][key] = rt
	g.mu.Unlock()
}

// refsOK reports whether checkRefs finds nothing wrong with p's references
// in scope (it asks the same questions, without writing diagnostics).
func refsOK(p *ParsedExpr, scope *Scope) bool {
	for _, r := range p.refs {
		if scope.notVisible(r.name) != "" {
			return false
		}
		switch r.name {
		case "steps":
			if r.field == "" {
				return false
			}
			if _, ok := scope.Steps[r.field]; !ok {
				return false
			}
		case "secrets":
			if r.field == "" {
				continue
			}
			if !slices.Contains(scope.Secrets, r.field) {
				return false
			}
		}
	}
	return true
}
