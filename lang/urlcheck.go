package lang

import (
	"encoding/json"
	"fmt"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// checkURL reports at compile time what the url's literal text shows is
// wrong: a literal that is not an absolute http or https URL with a host,
// a {{ }} before the scheme's "://", a template whose text leaves no host.
// A url that starts with a {{ }} (a base value) is checked when it is
// built, but for a second {{ }} right after the base, which is refused:
// where it lands depends on the base's text. The rest of a url with a
// url.raw(...) value is checked when it is built.
func (c *compiler) checkURL(v *graph.Value, n *dataNode) {
	if v == nil || n == nil {
		return
	}
	bad := func(format string, args ...any) {
		c.errorf(n.Range, "Invalid url", "%s", fmt.Sprintf(format, args...))
	}
	switch {
	case v.Lit != nil:
		var s string
		if json.Unmarshal(v.Lit, &s) != nil {
			if !isText(v.Type) {
				return // not text: wantText says so
			}
			s = string(v.Lit) // a number or bool, sent as its text
		}
		if err := expr.CheckHTTPURL(s); err != nil {
			bad("The url %q cannot be requested: %v. Write an absolute URL, like \"https://api.example.com/orders\".", s, err)
		}
	case v.Template != nil:
		parts := v.Template.Parts
		if len(parts) > 1 && parts[0].Expr != nil && parts[1].Expr != nil && !expr.RawURLExpr(parts[0].Expr.CEL) {
			// A base and a value right after it: the value would land in
			// the base's host or port (or path, or query: the base's
			// text decides), which is found only when the url is built.
			bad("The value of {{ %s }} follows the base {{ %s }} with no text between, so where it lands depends on the base's text (its host, its port or its path), and a path there fails when the request is built. Put the separator in the url, like \"{{ %s }}/{{ %s }}\" (the value as one path segment), or \"{{ %s }}/{{ url.raw(%s) }}\" to place a path with slashes.",
				parts[1].Expr.CEL, parts[0].Expr.CEL, parts[0].Expr.CEL, parts[1].Expr.CEL, parts[0].Expr.CEL, parts[1].Expr.CEL)
			return
		}
		if len(parts) == 0 || parts[0].Expr != nil {
			return // a base value: checked when the url is built
		}
		raw := false
		for i, pt := range parts {
			if pt.Expr == nil {
				continue
			}
			if l := expr.LayoutOf(expr.URLPrefix(parts[:i])); l.Auth < 0 {
				bad("The value of {{ %s }} would be part of the url's scheme. Write the scheme and its \"://\" as text, like \"https://{{ input.host }}/path\", or make the whole start of the url one value, like \"{{ input.base }}/path\".", pt.Expr.CEL)
				return
			}
			raw = raw || expr.RawURLExpr(pt.Expr.CEL)
			if t := pt.Expr.Type; t != nil && (t.Kind == graph.KindList || t.Kind == graph.KindMap || t.Kind == graph.KindObject) && expr.InHost(v.Template, i) {
				bad("The value of {{ %s }} is %s, whose text is JSON, and it would be placed in the url's host, which cannot hold it: the request could never be made. Use the field or element of it that holds the host, like {{ %s.host }}.", pt.Expr.CEL, map[graph.TypeKind]string{graph.KindList: "a list", graph.KindMap: "a map", graph.KindObject: "an object"}[t.Kind], pt.Expr.CEL)
				return
			}
		}
		if raw {
			return // a url.raw value may change the rest
		}
		pieces, _ := expr.URLPieces(v.Template, func(int) (string, error) { return "1", nil })
		if _, err := expr.BuildURL(pieces); err != nil {
			bad("The url cannot be requested whatever its values are: %v.", err)
		}
	}
}
