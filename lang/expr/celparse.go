package expr

import (
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/parser"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
)

// cel-go ships two parsers for the same grammar: the ANTLR one that
// cel.Env.Parse uses, and a faster hand-written Pratt parser that produces
// the same AST (ids, offsets, macro expansions) but for the differences
// handled below. The Pratt parser is not reachable through cel.Env, so
// flowrun builds one with the base environment's macros and the same
// defaults, parses with it, and hands the AST to the checker as it is
// (celnative.go), or through cel-go's documented ParsedExpr conversion. Only valid expressions take
// this path: when the fast parser reports a mistake, the caller parses
// again with cel.Env so that every diagnostic keeps the reference parser's
// wording. FuzzFastParse compares the two parsers on arbitrary text; the
// measured saving is in spec/language.md.
var (
	fastOnce   sync.Once
	fastParser *parser.Parser
)

// rawBeforeBytes reports whether src holds a string prefix with the raw
// marker before the bytes one (rb"x", Rb'x'): CEL's grammar takes only
// b then r (br"x"), but the Pratt parser takes both orders.
func rawBeforeBytes(src string) bool {
	for i := 0; i+2 < len(src); i++ {
		if (src[i] == 'r' || src[i] == 'R') && (src[i+1] == 'b' || src[i+1] == 'B') && (src[i+2] == '"' || src[i+2] == '\'') {
			return true
		}
	}
	return false
}

// fastParse parses src with the Pratt parser. ok is false when src has a
// syntax error or the parser is unavailable; the caller then falls back to
// env.Parse.
func fastParse(env *cel.Env, src string) (a *cel.Ast, ok bool) {
	fastOnce.Do(func() {
		p, err := parser.NewParser(
			parser.EnablePrattParser(true),
			parser.Macros(env.Macros()...),
			parser.PopulateMacroCalls(true),
		)
		if err == nil {
			fastParser = p
		}
	})
	if fastParser == nil {
		return nil, false
	}
	// The Pratt parser also takes an upper-case hex prefix (0X1F), which
	// CEL's grammar does not allow; leave such text to the reference.
	if strings.Contains(src, "0X") || rawBeforeBytes(src) {
		return nil, false
	}
	source := common.NewTextSource(src)
	parsed, errs := fastParser.Parse(source)
	if errs != nil && len(errs.GetErrors()) > 0 {
		return nil, false
	}
	if strings.Contains(src, ".") && !placeRootedIdents(parsed, src) {
		return nil, false
	}
	if a, ok := nativeAst(parsed, source); ok {
		return a, true
	}
	e, err := celast.ExprToProto(parsed.Expr())
	if err != nil {
		return nil, false
	}
	info, err := celast.SourceInfoToProto(parsed.SourceInfo())
	if err != nil {
		return nil, false
	}
	return cel.ParsedExprToAstWithSource(&exprpb.ParsedExpr{Expr: e, SourceInfo: info}, source), true
}

// placeRootedIdents moves each leading-dot identifier (.a, the root-scope
// form) to where the reference parser places it: the Pratt parser records
// the offset of the dot, the reference that of the name after it, past any
// whitespace or comment between the two. Such an identifier can stand in
// the expression or only in a macro call's recorded arguments (the
// variable of .all(.i, ...) is consumed by the expansion), so both are
// visited. It reports false, and the caller leaves src to the reference
// parser, when the text at a recorded offset is not the dot and the name.
func placeRootedIdents(parsed *celast.AST, src string) bool {
	info := parsed.SourceInfo()
	rooted := map[int64]string{}
	visit := celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.IdentKind && strings.HasPrefix(e.AsIdent(), ".") {
			rooted[e.ID()] = e.AsIdent()[1:]
		}
	})
	celast.PostOrderVisit(parsed.Expr(), visit)
	for _, call := range info.MacroCalls() {
		celast.PostOrderVisit(call, visit)
	}
	if len(rooted) == 0 {
		return true
	}
	// Offsets count code points, as the parsers' source does.
	text := []rune(src)
	for id, name := range rooted {
		r, ok := info.GetOffsetRange(id)
		if !ok {
			return false
		}
		at := nameAfterDot(text, int(r.Start))
		if at < 0 || !strings.HasPrefix(string(text[at:]), name) {
			return false
		}
		info.SetOffsetRange(id, celast.OffsetRange{Start: int32(at), Stop: int32(at + len(name))})
	}
	return true
}

// nameAfterDot returns the offset of the first token after the dot at
// text[dot], skipping CEL's whitespace and // comments, or -1 when
// text[dot] is not a dot or no token follows.
func nameAfterDot(text []rune, dot int) int {
	if dot < 0 || dot >= len(text) || text[dot] != '.' {
		return -1
	}
	i := dot + 1
	for i < len(text) {
		switch {
		case text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r' || text[i] == '\f':
			i++
		case text[i] == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return -1
}
