package expr

import (
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// Templates.
//
// A data value's string may hold CEL expressions between {{ and }}:
// "order {{ input.order_id }}". The expression ends at the first }} that is
// outside its string literals and brackets, so {{ {'a': {'b': 1}} }} and
// {{ '}}' }} work. A literal {{ is written {{ "{{" }}; a }} outside an
// expression is plain text.
//
// A template that is exactly one {{ expr }} (spaces allowed inside the
// braces, nothing outside) yields the expression's typed value: a list
// stays a list, a number a number. Any other template is text: each
// expression's value is converted to a string (strings as they are,
// integral numbers without a trailing .0, true and false, null as the empty
// string, lists and maps as compact JSON) and joined with the text around.

// ParsedTemplate is a string that parsed as a template.
type ParsedTemplate struct {
	src   string
	parts []parsedPart
}

type parsedPart struct {
	text string
	expr *ParsedExpr
}

// ParseTemplate parses a string that may hold {{ expr }} parts. rng is the
// range of the HCL string literal (quotes included).
func ParseTemplate(src string, rng hcl.Range) (*ParsedTemplate, hcl.Diagnostics) {
	return parseTemplate(src, rng, false)
}

// ParseTemplateShed is ParseTemplate followed by Shed. A plain expression
// (celquick.go) is not parsed: its references, shape and text are read
// straight from its text.
func ParseTemplateShed(src string, rng hcl.Range) (*ParsedTemplate, hcl.Diagnostics) {
	p, diags := parseTemplate(src, rng, true)
	if p != nil {
		p.Shed()
	}
	return p, diags
}

// quickTaken, when set (by tests), is called each time quickExpr reads an
// expression.
var quickTaken func()

func parseTemplate(src string, rng hcl.Range, shed bool) (*ParsedTemplate, hcl.Diagnostics) {
	p := &ParsedTemplate{src: src}
	var diags hcl.Diagnostics
	rest := 0
	for {
		open := strings.Index(src[rest:], "{{")
		if open < 0 {
			if rest < len(src) {
				p.parts = append(p.parts, parsedPart{text: src[rest:]})
			}
			break
		}
		open += rest
		if open > rest {
			p.parts = append(p.parts, parsedPart{text: src[rest:open]})
		}
		start := open + 2
		end := exprEnd(src, start)
		if end < 0 {
			loc := ExprLoc{Content: src, Rng: rng}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unclosed template expression",
				Detail:   `This {{ has no matching }}. Close the expression with }}, or write a literal {{ as {{ "{{" }}.`,
				Subject:  loc.rangeOf(open, open+2).Ptr(),
			})
			return nil, diags
		}
		loc := ExprLoc{Content: src, Rng: rng, off: start}
		body := src[start:end]
		if strings.TrimSpace(body) == "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Empty template expression",
				Detail:   `There is no expression between {{ and }}. Write one, such as {{ input.name }}, or write a literal {{ as {{ "{{" }}.`,
				Subject:  ExprLoc{Content: src, Rng: rng}.rangeOf(open, end+2).Ptr(),
			})
		} else if pe, ok := quickExprFor(shed, body, loc); ok {
			p.parts = append(p.parts, parsedPart{expr: pe})
		} else if pe, d := ParseSourceExprAt(body, loc); d.HasErrors() {
			diags = append(diags, d...)
		} else {
			p.parts = append(p.parts, parsedPart{expr: pe})
		}
		rest = end + 2
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, nil
}

// exprEnd returns the index of the }} that closes the expression starting
// at start, skipping string literals and nested braces, or -1.
func exprEnd(s string, start int) int {
	depth := 0
	for i := start; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			i = stringEnd(s, i)
			if i < 0 {
				return -1
			}
		case '{', '[', '(':
			depth++
		case ']', ')':
			depth--
		case '}':
			if depth <= 0 && i+1 < len(s) && s[i+1] == '}' {
				return i
			}
			depth--
		}
	}
	return -1
}

// stringEnd returns the index of the last quote of the CEL string literal
// whose first quote is at i (single, double or triple quoted; a raw string's
// r prefix changes nothing here but escapes), or -1.
func stringEnd(s string, i int) int {
	q := s[i : i+1]
	raw := i > 0 && (s[i-1] == 'r' || s[i-1] == 'R')
	if strings.HasPrefix(s[i:], q+q+q) {
		q = q + q + q
	}
	for j := i + len(q); j < len(s); j++ {
		if s[j] == '\\' && !raw {
			j++
			continue
		}
		if strings.HasPrefix(s[j:], q) {
			return j + len(q) - 1
		}
	}
	return -1
}

// Shed drops the parsed syntax of the template's expressions, keeping
// their text, place and references (StepRefs, SecretRefs); CheckTemplate
// then parses each again from its text. A compiler holding every template
// of a large workflow between decoding and checking it holds far less.
func (p *ParsedTemplate) Shed() {
	for _, pt := range p.parts {
		if pt.expr != nil {
			pt.expr.keepShape()
			pt.expr.ast = nil
		}
	}
}

// IsTemplate reports whether the string holds at least one {{ }}.
func (p *ParsedTemplate) IsTemplate() bool {
	for _, pt := range p.parts {
		if pt.expr != nil {
			return true
		}
	}
	return false
}

// single reports whether the template is exactly one {{ expr }}.
func (p *ParsedTemplate) single() bool {
	return len(p.parts) == 1 && p.parts[0].expr != nil
}

// StepRefs is as for ParsedExpr, over all the template's expressions.
func (p *ParsedTemplate) StepRefs() []string {
	return p.union((*ParsedExpr).StepRefs)
}

// SecretRefs returns the secret names the template uses, sorted, without
// duplicates.
func (p *ParsedTemplate) SecretRefs() []string {
	return p.union((*ParsedExpr).secretRefs)
}

func (p *ParsedTemplate) union(refs func(*ParsedExpr) []string) []string {
	if p.single() {
		return refs(p.parts[0].expr) // sorted, without duplicates
	}
	seen := map[string]bool{}
	var out []string
	for _, pt := range p.parts {
		if pt.expr == nil {
			continue
		}
		for _, n := range refs(pt.expr) {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// CheckTemplate type-checks a template; the result type is the
// expression's for a template that is exactly one {{ expr }}, else string.
func CheckTemplate(p *ParsedTemplate, scope *Scope) (*graph.Template, *graph.Type, hcl.Diagnostics) {
	t := &graph.Template{}
	var diags hcl.Diagnostics
	var single *graph.Type
	for _, pt := range p.parts {
		if pt.expr == nil {
			t.Parts = append(t.Parts, graph.TemplatePart{Text: pt.text})
			continue
		}
		e, d := CheckExpr(pt.expr, scope, nil)
		diags = append(diags, d...)
		if e != nil {
			single = e.Type
			t.Parts = append(t.Parts, graph.TemplatePart{Expr: e})
		}
	}
	if diags.HasErrors() {
		return nil, nil, diags
	}
	if p.single() {
		return t, single, nil
	}
	return t, graph.TypeString, nil
}

// quickExprFor is quickExpr for a template that is shed as it is parsed.
func quickExprFor(shed bool, body string, loc ExprLoc) (*ParsedExpr, bool) {
	if !shed {
		return nil, false
	}
	pe, ok := quickExpr(body, loc)
	if ok && quickTaken != nil {
		quickTaken()
	}
	return pe, ok
}
