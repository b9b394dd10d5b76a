package expr

import (
	"reflect"
	"unsafe"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
)

// Handing the fast parser's AST to the checker without a detour.
//
// cel-go builds a cel.Ast from a parsed *ast.AST only inside package cel;
// from outside, the documented way is through the ParsedExpr protocol
// buffer, which copies the tree twice (to the proto and back) and was half
// the cost of parsing a short expression. A cel.Ast is three fields: its
// source, the tree and the error of a load that found the tree too deep.
// astLayout has the same fields; nativeAst builds one and views it as a
// cel.Ast, but only when cel.Ast is, field for field, that layout (checked
// once by reflection: names, types and offsets), and only for a tree within
// the depth the proto conversion admits. Otherwise the caller takes the
// proto path, which is what an upgraded cel-go with another layout gets
// (TestNativeAstLayout fails then, to say so).

// astLayout is the layout nativeAst expects of cel.Ast.
type astLayout struct {
	source  common.Source
	impl    *celast.AST
	loadErr error
}

// nativeAstDepth is the depth beyond which cel-go's proto conversion
// records a load error (its defaultMaxASTDepth): deeper trees take that
// path, so that they fail as they did.
const nativeAstDepth = 250

// astLayoutOK says whether cel.Ast has astLayout's fields.
var astLayoutOK = sameLayout(reflect.TypeFor[cel.Ast](), reflect.TypeFor[astLayout]())

func sameLayout(a, b reflect.Type) bool {
	if a.Kind() != reflect.Struct || a.Size() != b.Size() || a.NumField() != b.NumField() {
		return false
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset {
			return false
		}
	}
	return true
}

// nativeAst returns parsed as an unchecked cel.Ast over source; ok is
// false when the layout is not the expected one or the tree is too deep.
func nativeAst(parsed *celast.AST, source common.Source) (*cel.Ast, bool) {
	if !astLayoutOK || mayExceedDepth(parsed.Expr(), 0) {
		return nil, false
	}
	l := &astLayout{source: source, impl: parsed}
	return (*cel.Ast)(unsafe.Pointer(l)), true
}

// mayExceedDepth reports whether e, at depth, may hold a node at
// nativeAstDepth or deeper as celast.ExceedsDepth counts (edges from the
// root). It counts a map entry and a struct field as a level of their own,
// so it never says less than ExceedsDepth; unlike it, it builds nothing.
func mayExceedDepth(e celast.Expr, depth int) bool {
	if depth >= nativeAstDepth {
		return true
	}
	if e == nil {
		return false
	}
	d := depth + 1
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() && mayExceedDepth(c.Target(), d) {
			return true
		}
		for _, a := range c.Args() {
			if mayExceedDepth(a, d) {
				return true
			}
		}
	case celast.SelectKind:
		return mayExceedDepth(e.AsSelect().Operand(), d)
	case celast.ListKind:
		for _, x := range e.AsList().Elements() {
			if mayExceedDepth(x, d) {
				return true
			}
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			if mayExceedDepth(me.Key(), d+1) || mayExceedDepth(me.Value(), d+1) {
				return true
			}
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			if mayExceedDepth(f.AsStructField().Value(), d+1) {
				return true
			}
		}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		for _, x := range []celast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()} {
			if mayExceedDepth(x, d) {
				return true
			}
		}
	}
	return false
}
