package lang

import (
	"strings"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// This file decodes the two kinds of CEL-bearing attributes: control
// attributes (a string holding one bare CEL expression) and data attributes
// (literal values of any shape whose strings may be {{ }} templates).

// exprDecl is a parsed control expression and the range of the string
// literal holding it.
type exprDecl struct {
	Parsed *expr.ParsedExpr
	Range  hcl.Range
}

// dataNode is a decoded data attribute: a literal (strings without {{ }},
// numbers, bools, null, and lists and objects made only of those), a
// template, or a list or object with a template somewhere inside.
type dataNode struct {
	Range  hcl.Range
	IsLit  bool
	Lit    any // the JSON-like Go value (see ctyToGo), when IsLit
	Tmpl   *expr.ParsedTemplate
	List   []*dataNode
	Object map[string]*dataNode
	// Keys holds an object's key ranges, also once folded to a literal.
	Keys   map[string]hcl.Range
	IsList bool
}

// stringLiteral returns the text of a string literal: a quoted string or a
// heredoc without ${ } or %{ } parts.
func stringLiteral(expr hcl.Expression) (string, bool, hcl.Diagnostics) {
	// A quoted string of one literal part, the most common, holds nothing
	// rejectInterpolation would report: its text is that part's.
	if te, ok := expr.(*hclsyntax.TemplateExpr); ok && len(te.Parts) == 1 {
		if lit, ok := te.Parts[0].(*hclsyntax.LiteralValueExpr); ok && !lit.Val.IsNull() && lit.Val.IsKnown() {
			return lit.Val.AsString(), true, nil
		}
	}
	if diags := rejectInterpolation(expr); diags.HasErrors() {
		return "", false, diags
	}
	te, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok {
		return "", false, nil
	}
	var b strings.Builder
	for _, p := range te.Parts {
		lit, ok := p.(*hclsyntax.LiteralValueExpr)
		if !ok || lit.Val.IsNull() || !lit.Val.IsKnown() {
			return "", false, nil
		}
		b.WriteString(lit.Val.AsString())
	}
	return b.String(), true, nil
}

// rejectInterpolation reports HCL's own ${ } and %{ } template syntax
// anywhere in expr: run-time values use CEL in {{ }} instead.
func rejectInterpolation(expr hcl.Expression) hcl.Diagnostics {
	return hclsyntax.VisitAll(asSyntax(expr), func(n hclsyntax.Node) hcl.Diagnostics {
		switch e := n.(type) {
		case *hclsyntax.TemplateWrapExpr:
			return hcl.Diagnostics{interpolationError(e.Range())}
		case *hclsyntax.TemplateExpr:
			for _, p := range e.Parts {
				if _, ok := p.(*hclsyntax.LiteralValueExpr); !ok {
					return hcl.Diagnostics{interpolationError(p.Range())}
				}
			}
		}
		return nil
	})
}

func asSyntax(expr hcl.Expression) hclsyntax.Node {
	if n, ok := expr.(hclsyntax.Expression); ok {
		return n
	}
	return &hclsyntax.LiteralValueExpr{SrcRange: expr.Range()}
}

func interpolationError(rng hcl.Range) *hcl.Diagnostic {
	return errAt(rng, "Unsupported interpolation",
		"flowrun does not use HCL's ${ } or %{ } templates: values are computed at run time by CEL. In a data attribute write the expression in double braces, like \"order {{ input.order_id }}\"; in a control attribute (when, until, items, key) write the bare expression, like when = \"input.amount > 100\". To write a literal \"${\", escape it as \"$${\".")
}

// decodeControl decodes a control attribute: a string holding a bare CEL
// expression, parsed with the string literal's range.
func decodeControl(attr *hcl.Attribute) (*exprDecl, hcl.Diagnostics) {
	src, ok, diags := stringLiteral(attr.Expr)
	if diags.HasErrors() {
		return nil, diags
	}
	if !ok {
		return nil, hcl.Diagnostics{errAt(attr.Expr.Range(), "Expected a CEL string",
			"The argument %q holds a CEL expression written as a string, like %s = \"input.amount > 100\". Quote the expression.", attr.Name, attr.Name)}
	}
	if t := strings.TrimSpace(src); strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") {
		inner := strings.TrimSpace(t[2 : len(t)-2])
		return nil, hcl.Diagnostics{errAt(attr.Expr.Range(), "Template in a control attribute",
			"%s is a CEL expression, not a template: write %s = %q without {{ }}.", attr.Name, attr.Name, inner)}
	}
	p, pdiags := expr.ParseSourceExprAt(src, expr.ExprLoc{Content: src, Rng: attr.Expr.Range()})
	if pdiags.HasErrors() || p == nil {
		return nil, pdiags
	}
	return &exprDecl{Parsed: p, Range: attr.Expr.Range()}, pdiags
}

// decodeData decodes a data attribute's expression.
func decodeData(x hcl.Expression) (*dataNode, hcl.Diagnostics) {
	switch e := x.(type) {
	case *hclsyntax.TemplateExpr:
		src, ok, diags := stringLiteral(e)
		if diags.HasErrors() {
			return nil, diags
		}
		if !ok {
			return nil, hcl.Diagnostics{interpolationError(e.Range())}
		}
		// Only the references are read before the template is checked:
		// its syntax is parsed again then, not held meanwhile.
		p, pdiags := expr.ParseTemplateShed(src, e.Range())
		if pdiags.HasErrors() || p == nil {
			return nil, pdiags
		}
		if !p.IsTemplate() {
			return &dataNode{Range: e.Range(), IsLit: true, Lit: src}, pdiags
		}
		return &dataNode{Range: e.Range(), Tmpl: p}, pdiags
	case *hclsyntax.TemplateWrapExpr:
		return nil, hcl.Diagnostics{interpolationError(e.Range())}
	case *hclsyntax.ParenthesesExpr:
		return decodeData(e.Expression)
	case *hclsyntax.TupleConsExpr:
		n := &dataNode{Range: e.Range(), IsList: true, List: []*dataNode{}}
		var diags hcl.Diagnostics
		for _, ee := range e.Exprs {
			c, d := decodeData(ee)
			diags = append(diags, d...)
			if c != nil {
				n.List = append(n.List, c)
			}
		}
		return n.fold(), diags
	case *hclsyntax.ObjectConsExpr:
		keyRanges := map[string]hcl.Range{}
		n := &dataNode{Range: e.Range(), Object: map[string]*dataNode{}, Keys: keyRanges}
		var diags hcl.Diagnostics
		for _, item := range e.Items {
			key, kd := objectKey(item.KeyExpr)
			diags = append(diags, kd...)
			if kd.HasErrors() {
				continue
			}
			if first, dup := keyRanges[key]; dup {
				diags = append(diags, duplicate("key", key, first, item.KeyExpr.Range()))
				continue
			}
			keyRanges[key] = item.KeyExpr.Range()
			c, d := decodeData(item.ValueExpr)
			diags = append(diags, d...)
			if c != nil {
				n.Object[key] = c
			}
		}
		return n.fold(), diags
	case *hclsyntax.LiteralValueExpr, *hclsyntax.UnaryOpExpr:
		if len(x.Variables()) == 0 {
			v, diags := x.Value(nil)
			if !diags.HasErrors() {
				g, err := ctyToGo(v)
				if err == nil {
					return &dataNode{Range: x.Range(), IsLit: true, Lit: g}, nil
				}
			}
		}
	case *hclsyntax.ScopeTraversalExpr:
		name := e.Traversal.RootName()
		hint := ""
		switch name {
		case "input", "steps", "run", "item", "index", "secrets":
			hint = " To use a value at run time, write it as a template: \"{{ " + string(hclTraversalText(e)) + " }}\"."
		}
		return nil, hcl.Diagnostics{errAt(e.Range(), "Reference not allowed",
			"A data attribute holds literal values and {{ }} templates, not bare references.%s", hint)}
	}
	return nil, hcl.Diagnostics{errAt(x.Range(), "Unsupported expression",
		"A data attribute holds literal values (strings, numbers, bools, null, lists and objects) whose strings may be {{ }} templates. Compute values with CEL inside {{ }}, like \"{{ input.count * 2 }}\".")}
}

// hclTraversalText renders a traversal such as input.order_id.
func hclTraversalText(e *hclsyntax.ScopeTraversalExpr) string {
	var b strings.Builder
	for i, t := range e.Traversal {
		switch s := t.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		default:
			if i == 0 {
				return "..."
			}
			b.WriteString("[...]")
		}
	}
	return b.String()
}

// objectKey reads an object constructor key: a bare name or a plain string.
func objectKey(expr hclsyntax.Expression) (string, hcl.Diagnostics) {
	if k, ok := expr.(*hclsyntax.ObjectConsKeyExpr); ok {
		if !k.ForceNonLiteral {
			if name := hcl.ExprAsKeyword(k.Wrapped); name != "" {
				return name, nil
			}
		}
		expr = k.Wrapped
	}
	if s, ok, diags := stringLiteral(expr); diags.HasErrors() || ok {
		return s, diags
	}
	return "", hcl.Diagnostics{errAt(expr.Range(), "Invalid object key",
		"An object key must be a name or a quoted string, like { name = 1 } or { \"Content-Type\" = \"text/plain\" }.")}
}

// fold turns a list or object whose children are all literals into one
// literal.
func (n *dataNode) fold() *dataNode {
	if n.IsList {
		lit := make([]any, 0, len(n.List))
		for _, c := range n.List {
			if !c.IsLit {
				return n
			}
			lit = append(lit, c.Lit)
		}
		return &dataNode{Range: n.Range, IsLit: true, Lit: lit}
	}
	lit := make(map[string]any, len(n.Object))
	for k, c := range n.Object {
		if !c.IsLit {
			return n
		}
		lit[k] = c.Lit
	}
	return &dataNode{Range: n.Range, IsLit: true, Lit: lit, Keys: n.Keys}
}

// templates calls f for each template in the tree.
func (n *dataNode) templates(f func(*dataNode)) {
	if n == nil {
		return
	}
	switch {
	case n.Tmpl != nil:
		f(n)
	case n.IsList:
		for _, c := range n.List {
			c.templates(f)
		}
	default:
		for _, k := range naming.NamesSorted(n.Object) {
			n.Object[k].templates(f)
		}
	}
}
