package expr

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
)

// An http url's template as URL pieces (urlbuild.go): at compile time, to
// check what its literal text decides, and when a step runs, to build the
// URL the request goes to.

// URLPieces turns a url template into pieces, text(i) giving the value of
// its i-th part (an expression). The first part, when it is an expression,
// is the base and is raw, and so is a url.raw(...) part; every other
// expression is escaped where it lands.
func URLPieces(t *graph.Template, text func(i int) (string, error)) ([]URLPiece, error) {
	pieces := make([]URLPiece, 0, len(t.Parts))
	for i, pt := range t.Parts {
		if pt.Expr == nil {
			pieces = append(pieces, URLPiece{Text: pt.Text})
			continue
		}
		s, err := text(i)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, URLPiece{Text: s, Escape: i > 0 && !RawURLExpr(pt.Expr.CEL), Expr: pt.Expr.CEL})
	}
	return pieces, nil
}

// InHost reports whether the i-th part of t, an expression after some
// text, lands in the url's host or port, where its text is placed as it
// is: decided, as BuildURL decides it, by the template's text alone.
func InHost(t *graph.Template, i int) bool {
	return LayoutOf(URLPrefix(t.Parts)).partAt(len(URLPrefix(t.Parts[:i]))) == partHost
}

// URLPrefix is the literal text of parts (which hold no raw value).
func URLPrefix(parts []graph.TemplatePart) string {
	var b strings.Builder
	for _, pt := range parts {
		b.WriteString(pt.Text)
	}
	return b.String()
}

// EvalURL builds the URL of an http action: its url template with each
// value escaped where it lands, and its query parameters added. An error
// that is a *URLError is a URL that cannot be built (with the built URL
// when only its final check failed); any other is an evaluation error.
func (p *Program) EvalURL(ctx context.Context, h *graph.HTTPAction, a *Activation) (string, error) {
	var s string
	var err error
	switch v := h.URL; {
	case v == nil:
		return "", &URLError{Msg: "the url is missing"}
	case v.Template != nil && !(len(v.Template.Parts) == 1 && v.Template.Parts[0].Expr != nil):
		var pieces []URLPiece
		pieces, err = URLPieces(v.Template, func(i int) (string, error) {
			e := v.Template.Parts[i].Expr
			x, err := p.Eval(ctx, e, a)
			if err != nil {
				return "", err
			}
			t, err := TemplateText(x)
			if err != nil {
				return "", fmt.Errorf("rendering %q as text: %w", e.CEL, err)
			}
			return t, nil
		})
		if err != nil {
			return "", err
		}
		s, err = BuildURL(pieces)
	default: // a literal, or one {{ }}: the whole url, placed as it is
		x, xerr := p.EvalValue(ctx, v, a)
		if xerr != nil {
			return "", xerr
		}
		t, xerr := TemplateText(x)
		if xerr != nil {
			return "", xerr
		}
		s, err = BuildURL([]URLPiece{{Text: t}})
	}
	if err != nil {
		return s, err
	}
	if h.Query == nil {
		return s, nil
	}
	q, err := p.EvalValue(ctx, h.Query, a)
	if err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	m, _ := q.(map[string]any)
	params := make(map[string]string, len(m))
	for k, x := range m {
		if x == nil {
			continue
		}
		t, err := TemplateText(x)
		if err != nil {
			return "", fmt.Errorf("query: %s: %w", k, err)
		}
		params[k] = t
	}
	return AppendQuery(s, params), nil
}
