package lang

import (
	"strings"
	"unicode/utf8"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Positions in a workflow file, for tools such as the language server:
// what block, attribute, expression and reference stand at a byte offset,
// on the syntax tree of a file that may not parse (hclsyntax keeps what it
// recovered), and what an expression there may see.

// ParseSyntax parses src into its syntax tree for tools. The tree is
// partial when the file has syntax errors. A file that is not UTF-8 or
// nests deeper than MaxNesting gets an empty body and one diagnostic, and
// is never handed to hclsyntax, which would recurse once per level.
func ParseSyntax(filename string, src []byte) (*hclsyntax.Body, hcl.Diagnostics) {
	empty := &hclsyntax.Body{SrcRange: hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}}
	if !utf8.Valid(src) {
		return empty, hcl.Diagnostics{invalidUTF8(filename, src)}
	}
	if d := checkShape(filename, src); d != nil {
		return empty, hcl.Diagnostics{d}
	}
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if f == nil {
		return empty, diags
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok || body == nil {
		return empty, diags
	}
	return body, diags
}

// SiteBlock is one block around a position.
type SiteBlock struct {
	Block *hclsyntax.Block
	// InHeader: the position is on the block's type or labels, before its
	// opening brace.
	InHeader bool
}

// Site is what stands at a byte offset of a file.
type Site struct {
	// Blocks are the blocks whose range holds the offset, outermost first.
	Blocks []SiteBlock
	// Attr is the attribute whose range holds the offset, or nil.
	Attr *hclsyntax.Attribute
	// OnName: the offset is on Attr's name.
	OnName bool
	// Control: Attr is a control expression (a bare CEL expression, not a
	// template; language.md §10).
	Control bool
	// InCEL: the offset is inside CEL text: a control expression's string,
	// or a {{ }} of a template. CELStart is the byte offset of that text.
	InCEL    bool
	CELStart int
	CEL      string
	// Ref is the reference under the offset: a CEL selection chain
	// (steps.charge.output, input.amount) or a static HCL reference
	// (step.build, breaker.payments). Its Parts are empty when there is
	// none.
	Ref Ref
}

// Ref is a chain of names joined by dots, as written in the file.
type Ref struct {
	Parts []RefPart
	// Cursor is the index of the part the offset is in or right after.
	Cursor int
	// Prefix is the text of Parts[Cursor] before the offset.
	Prefix string
	// Static: an HCL static reference, not CEL.
	Static bool
}

// RefPart is one name of a Ref with its byte range in the file.
type RefPart struct {
	Name       string
	Start, End int
}

// Types returns the block types of the site's blocks, outermost first.
func (s *Site) Types() []string {
	out := make([]string, len(s.Blocks))
	for i, b := range s.Blocks {
		out[i] = b.Block.Type
	}
	return out
}

// Label returns the first label of the site's block of type t, or "".
func (s *Site) Label(t string) string {
	for _, b := range s.Blocks {
		if b.Block.Type == t && len(b.Block.Labels) > 0 {
			return b.Block.Labels[0]
		}
	}
	return ""
}

// SiteAt returns what stands at offset in the file whose source is src and
// syntax tree body (from ParseSyntax).
func SiteAt(body *hclsyntax.Body, src []byte, offset int) *Site {
	s := &Site{}
	for body != nil {
		var inner *hclsyntax.Body
		for _, b := range body.Blocks {
			r := b.Range()
			if offset < r.Start.Byte || offset > r.End.Byte {
				continue
			}
			s.Blocks = append(s.Blocks, SiteBlock{Block: b, InHeader: offset < b.OpenBraceRange.Start.Byte})
			if offset >= b.OpenBraceRange.End.Byte {
				inner = b.Body
			}
			break
		}
		if inner == nil {
			for _, a := range body.Attributes {
				r := a.SrcRange
				if offset >= r.Start.Byte && offset <= r.End.Byte {
					s.Attr = a
					s.OnName = offset <= a.NameRange.End.Byte
					break
				}
			}
		}
		body = inner
	}
	if s.Attr == nil || s.OnName {
		return s
	}
	s.Control = controlAttr(s.Types(), s.Attr.Name)
	s.findRef(src, offset)
	return s
}

// controlAttr reports whether attribute attr of the block at path holds a
// bare CEL expression (language.md §10).
func controlAttr(path []string, attr string) bool {
	last := ""
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	switch attr {
	case "key":
		return last == "workflow" && len(path) == 1 || last == "concurrency" || last == "webhook"
	case "when":
		return last == "step" || last == "retry" || last == "case"
	case "items":
		return last == "foreach"
	case "until":
		return last == "step"
	}
	return false
}

// findRef finds the string or static reference of s.Attr at offset.
func (s *Site) findRef(src []byte, offset int) {
	var str *hclsyntax.TemplateExpr
	var trav *hclsyntax.ScopeTraversalExpr
	hclsyntax.VisitAll(s.Attr.Expr, func(n hclsyntax.Node) hcl.Diagnostics {
		r := n.Range()
		if offset < r.Start.Byte || offset > r.End.Byte {
			return nil
		}
		switch e := n.(type) {
		case *hclsyntax.TemplateExpr:
			str = e
		case *hclsyntax.ScopeTraversalExpr:
			trav = e
		}
		return nil
	})
	if trav != nil {
		s.Ref = traversalRef(trav, offset)
		return
	}
	if str == nil {
		return
	}
	r := str.SrcRange
	start, end := r.Start.Byte, r.End.Byte
	if end > len(src) || start >= end {
		return
	}
	// The text between the quotes (a heredoc's body is taken whole: its
	// marker lines hold no names).
	if src[start] == '"' {
		start++
		if end-1 > start && src[end-1] == '"' {
			end--
		}
	}
	if offset < start || offset > end {
		return
	}
	text := src[start:end]
	at := offset - start
	if s.Control {
		s.InCEL, s.CELStart, s.CEL = true, start, string(text)
	} else {
		open, close, ok := templatePart(text, at)
		if !ok {
			return
		}
		s.InCEL, s.CELStart, s.CEL = true, start+open, string(text[open:close])
	}
	s.Ref = RefAt(src, s.CELStart, s.CELStart+len(s.CEL), offset)
}

// templatePart returns the bounds of the CEL text of the {{ }} holding at,
// if any: after its "{{", before its "}}" (or the end of text when it is
// not closed yet).
func templatePart(text []byte, at int) (open, close int, ok bool) {
	open = -1
	for i := 0; i+1 < len(text) && i < at; i++ {
		switch {
		case text[i] == '{' && text[i+1] == '{':
			open = i + 2
			i++
		case text[i] == '}' && text[i+1] == '}' && open >= 0 && i+1 < at:
			open = -1
			i++
		}
	}
	if open < 0 || open > at {
		return 0, 0, false
	}
	close = len(text)
	for i := at; i+1 < len(text); i++ {
		if text[i] == '}' && text[i+1] == '}' {
			close = i
			break
		}
	}
	return open, close, true
}

// RefAt returns the chain of dotted names around offset within
// src[lo:hi]: back to its root, forward to the end of the name the offset
// is in. A chain selected on something other than a name (f().x, a[0].b)
// is no reference. It reads bytes only, so it serves text that does not
// parse too.
func RefAt(src []byte, lo, hi, offset int) Ref {
	lo, hi = max(lo, 0), min(hi, len(src))
	if offset < lo || offset > hi {
		return Ref{}
	}
	start := offset
	for start > lo && (identByte(src[start-1]) || src[start-1] == '.') {
		start--
	}
	end := offset
	for end < hi && identByte(src[end]) {
		end++
	}
	if start == end || src[start] == '.' || src[start] >= '0' && src[start] <= '9' {
		return Ref{}
	}
	if start > lo && (src[start-1] == ')' || src[start-1] == ']') {
		return Ref{}
	}
	var ref Ref
	partStart := start
	for i := start; i <= end; i++ {
		if i < end && src[i] != '.' {
			continue
		}
		ref.Parts = append(ref.Parts, RefPart{Name: string(src[partStart:i]), Start: partStart, End: i})
		if offset >= partStart && offset <= i {
			ref.Cursor = len(ref.Parts) - 1
			ref.Prefix = string(src[partStart:offset])
		}
		partStart = i + 1
	}
	return ref
}

// traversalRef is the static reference t as a Ref.
func traversalRef(t *hclsyntax.ScopeTraversalExpr, offset int) Ref {
	ref := Ref{Static: true}
	for _, step := range t.Traversal {
		var name string
		switch st := step.(type) {
		case hcl.TraverseRoot:
			name = st.Name
		case hcl.TraverseAttr:
			name = st.Name
		default:
			return ref
		}
		r := step.SourceRange()
		start := r.Start.Byte
		if _, attr := step.(hcl.TraverseAttr); attr {
			start++ // past the dot
		}
		ref.Parts = append(ref.Parts, RefPart{Name: name, Start: start, End: r.End.Byte})
		if offset >= start && offset <= r.End.Byte {
			ref.Cursor = len(ref.Parts) - 1
			ref.Prefix = name[:min(len(name), offset-start)]
		}
	}
	return ref
}

// ScopeAt returns what a CEL expression at site sees in the compiled graph
// g of the site's workflow (expr.StepScope and expr.GraphScope), or nil
// when the site is not in an expression slot or g does not have its step.
func ScopeAt(g *graph.Graph, site *Site) *expr.Scope {
	if g == nil || site == nil || site.Attr == nil {
		return nil
	}
	path := site.Types()
	if len(path) < 1 || path[0] != "workflow" {
		return nil
	}
	attr := site.Attr.Name
	if len(path) == 1 {
		if attr == "key" {
			return expr.GraphScope(g, expr.SlotKey)
		}
		return nil
	}
	switch path[1] {
	case "concurrency":
		if attr == "key" {
			return expr.GraphScope(g, expr.SlotConcurrencyKey)
		}
	case "output":
		return expr.GraphScope(g, expr.SlotOutput)
	case "alert":
		return expr.GraphScope(g, expr.SlotAlert)
	case "schedule":
		return expr.GraphScope(g, expr.SlotSchedule)
	case "webhook":
		switch attr {
		case "inputs":
			return expr.GraphScope(g, expr.SlotWebhookInputs)
		case "key":
			return expr.GraphScope(g, expr.SlotWebhookKey)
		}
	case "step":
		var st *graph.Step
		name := site.Label("step")
		for _, x := range g.Steps {
			if x.Name == name {
				st = x
			}
		}
		if st == nil {
			return nil
		}
		if len(path) == 2 {
			switch attr {
			case "when":
				return expr.StepScope(g, st, expr.SlotWhen)
			case "until":
				return expr.StepScope(g, st, expr.SlotUntil)
			case "idempotency_key":
				return expr.StepScope(g, st, expr.SlotIdempotencyKey)
			}
			return nil
		}
		switch path[2] {
		case "retry":
			return expr.StepScope(g, st, expr.SlotRetryWhen)
		case "foreach":
			return expr.StepScope(g, st, expr.SlotItems)
		case "switch":
			return expr.StepScope(g, st, expr.SlotCaseWhen)
		}
		if strings.HasPrefix(path[2], "catch") {
			return expr.StepScope(g, st, expr.SlotCatchWhen)
		}
		return expr.StepScope(g, st, expr.SlotData)
	}
	return nil
}
