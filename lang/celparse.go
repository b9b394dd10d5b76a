package lang

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
// cel.Env.Parse uses, and a hand-written Pratt parser that produces the
// same AST (ids, offsets, macro expansions) about three times faster. The
// Pratt parser is not reachable through cel.Env, so flowrun builds one
// with the base environment's macros and the same defaults, parses with
// it, and hands the AST to the checker through cel-go's documented
// ParsedExpr conversion. Only valid expressions take this path: when the
// fast parser reports a mistake, the caller parses again with cel.Env so
// that every diagnostic keeps the reference parser's wording.
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
	// The one known difference: the Pratt parser places a leading-dot
	// identifier (.a, the root-scope form) one column earlier than the
	// reference parser. Leave those rare expressions to the reference.
	if strings.Contains(src, ".") {
		rooted := false
		celast.PostOrderVisit(parsed.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			if e.Kind() == celast.IdentKind && strings.HasPrefix(e.AsIdent(), ".") {
				rooted = true
			}
		}))
		if rooted {
			return nil, false
		}
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
