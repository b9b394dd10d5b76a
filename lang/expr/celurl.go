package expr

import (
	"net/url"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The url functions of the CEL environment (language.md §12), named as
// cel-go's extensions name theirs (base64.encode, math.greatest):
//
//	url.pathEscape(s)  s escaped as one path segment ("/" becomes %2F)
//	url.queryEscape(s) s escaped as a query key or value (" " becomes +)
//	url.raw(s)         s itself; as the whole of a {{ }} in an http url
//	                   it places s in the URL unescaped (urlbuild.go)
//
// All three are pure functions of their argument.

func urlFunctions() []cel.EnvOption {
	str := func(f func(string) string) cel.OverloadOpt {
		return cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(f(string(s)))
		})
	}
	return []cel.EnvOption{
		cel.Function("url.pathEscape",
			cel.Overload("url_path_escape_string", []*cel.Type{cel.StringType}, cel.StringType, str(url.PathEscape))),
		cel.Function("url.queryEscape",
			cel.Overload("url_query_escape_string", []*cel.Type{cel.StringType}, cel.StringType, str(url.QueryEscape))),
		cel.Function("url.raw",
			cel.Overload("url_raw_string", []*cel.Type{cel.StringType}, cel.StringType, str(func(s string) string { return s }))),
	}
}

// RawURLExpr reports whether the stored expression text is a call of
// url.raw: the whole of the {{ }}, not a part of it.
func RawURLExpr(text string) bool {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "url.raw(") || !strings.HasSuffix(text, ")") {
		return false
	}
	env, err := base()
	if err != nil {
		return false
	}
	a, ok := fastParse(env, text)
	if !ok {
		var iss *cel.Issues
		if a, iss = env.Parse(text); iss.Err() != nil {
			return false
		}
	}
	e := a.NativeRep().Expr()
	if e.Kind() != ast.CallKind {
		return false
	}
	c := e.AsCall()
	if len(c.Args()) != 1 {
		return false
	}
	if c.FunctionName() == "url.raw" && !c.IsMemberFunction() {
		return true
	}
	return c.FunctionName() == "raw" && c.IsMemberFunction() &&
		c.Target().Kind() == ast.IdentKind && c.Target().AsIdent() == "url"
}
