package lang

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// This file finds literal values that are well-typed but can only fail
// when the step runs: an empty command, a program named "", a NUL byte in
// an argument, a directory or an environment variable (an operating
// system cannot pass one), an environment variable name that cannot be
// set, a header that Go's HTTP client refuses to send, a sleep until a
// text that is not a time. validate reports them at their position, so
// apply writes nothing for a workflow that could not succeed
// (language.md §8.3, §8.4, §8.6). Only literal text is judged: a {{ }}
// value is known at run time.

// literalText returns the text of a quoted string or heredoc as written
// ({{ }} parts included), or ok false for any other expression.
func literalText(expr hcl.Expression) (string, bool) {
	if p, ok := expr.(*hclsyntax.ParenthesesExpr); ok {
		return literalText(p.Expression)
	}
	te, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, p := range te.Parts {
		lit, ok := p.(*hclsyntax.LiteralValueExpr)
		if !ok || lit.Val.IsNull() || !lit.Val.IsKnown() {
			return "", false
		}
		b.WriteString(lit.Val.AsString())
	}
	return b.String(), true
}

// nulError reports a NUL byte in the literal text of what.
func nulError(rng hcl.Range, what string) *hcl.Diagnostic {
	return errAt(rng, "NUL byte in "+what,
		"The %s holds a NUL byte (\\u0000), which the operating system cannot pass to a program. Remove it.", what)
}

// checkExecLiterals checks exec's literal command, dir and env.
func checkExecLiterals(attrs hcl.Attributes, shell bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a := attrs["command"]; a != nil {
		if shell {
			if s, ok := literalText(a.Expr); ok && strings.ContainsRune(s, 0) {
				diags = append(diags, nulError(a.Expr.Range(), "script"))
			}
		} else if tc, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
			if len(tc.Exprs) == 0 {
				diags = append(diags, errAt(a.Expr.Range(), "Empty command",
					"command names the program to run and its arguments, like command = [\"./bin/ship\", \"--express\"]; an empty list runs nothing."))
			}
			for i, e := range tc.Exprs {
				s, ok := literalText(e)
				switch {
				case !ok:
				case i == 0 && s == "":
					diags = append(diags, errAt(e.Range(), "Empty program name",
						"command[0] is the program to run, like \"./bin/ship\" or \"curl\"; it cannot be empty."))
				case strings.ContainsRune(s, 0):
					diags = append(diags, nulError(e.Range(), fmt.Sprintf("command[%d]", i)))
				}
			}
		}
	}
	if a := attrs["dir"]; a != nil {
		if s, ok := literalText(a.Expr); ok && strings.ContainsRune(s, 0) {
			diags = append(diags, nulError(a.Expr.Range(), "dir"))
		}
	}
	if a := attrs["env"]; a != nil {
		forObjectItems(a.Expr, func(name string, keyRng hcl.Range, value hclsyntax.Expression) {
			switch {
			case name == "" || strings.ContainsAny(name, "=\x00"):
				diags = append(diags, errAt(keyRng, "Invalid environment variable name",
					"%q cannot name an environment variable: a name is not empty and holds no \"=\" and no NUL byte, like TOKEN or ORDER_ID.", name))
			default:
				if s, ok := literalText(value); ok && strings.ContainsRune(s, 0) {
					diags = append(diags, nulError(value.Range(), fmt.Sprintf("value of env %s", name)))
				}
			}
		})
	}
	return diags
}

// checkHTTPLiterals checks http's literal header names and values.
func checkHTTPLiterals(attrs hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a := attrs["headers"]; a != nil {
		forObjectItems(a.Expr, func(name string, keyRng hcl.Range, value hclsyntax.Expression) {
			if !validHeaderName(name) {
				diags = append(diags, errAt(keyRng, "Invalid header name",
					"%q cannot name an HTTP header: use letters, digits and !#$%%&'*+-.^_`|~, like X-Request-Id.", name))
				return
			}
			if s, ok := literalText(value); ok && strings.ContainsAny(s, "\x00\r\n") {
				diags = append(diags, errAt(value.Range(), "Invalid header value",
					"The value of header %s holds a line break or a NUL byte, which HTTP does not allow in a header. Remove it.", name))
			}
		})
	}
	return diags
}

// checkSleepUntilLiteral checks a literal sleep until: an RFC 3339 time.
func checkSleepUntilLiteral(a *hcl.Attribute) hcl.Diagnostics {
	s, ok := literalText(a.Expr)
	if !ok || strings.Contains(s, "{{") {
		return nil
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return hcl.Diagnostics{errAt(a.Expr.Range(), "Invalid time",
			"sleep until needs an RFC 3339 time such as \"2030-01-02T15:04:05Z\", or a {{ }} value that gives one; %q is not one.", s)}
	}
	return nil
}

// forObjectItems calls fn for each item of a literal object whose key is a
// name or a quoted string.
func forObjectItems(expr hcl.Expression, fn func(name string, keyRng hcl.Range, value hclsyntax.Expression)) {
	oc, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return
	}
	for _, item := range oc.Items {
		name, d := objectKey(item.KeyExpr)
		if d.HasErrors() {
			continue // reported where the object is decoded
		}
		fn(name, item.KeyExpr.Range(), item.ValueExpr)
	}
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
