package lsp

import (
	"bytes"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// complete answers textDocument/completion at byte offset off of d.
func (s *server) complete(d *document, off int) *CompletionList {
	list := &CompletionList{Items: []CompletionItem{}}
	if d.body == nil {
		return list // over the size limit
	}
	site := lang.SiteAt(d.body, d.text.src, off)
	wf := site.Label("workflow")
	if wf == "" {
		wf = d.workflowAt(off)
	}
	g := d.graphOf(wf)
	w := workflowBlock(d.body, wf)
	switch {
	case site.InCEL:
		list.Items = s.celItems(g, w, site, site.Ref)
	case site.Attr != nil && site.Ref.Static:
		list.Items = staticItems(g, w, site.Ref)
	case site.Attr != nil && !site.OnName && site.Attr.Name == "operation" && innermost(site) == "openapi":
		list.Items = s.operationItems(d, site, off)
	case site.Attr != nil && !site.OnName:
		// Inside a literal value: nothing to propose.
	default:
		if ref, ok := d.stringRefAt(off); ok {
			// A string the parser could not read (it is being typed).
			list.Items = s.celItems(g, w, site, ref)
			break
		}
		prefix, ok := d.namePrefix(off)
		if !ok {
			break
		}
		path, inBody := blockPathAt(d.text.src, off)
		if inBody {
			list.Items = nameItems(path, prefix)
		}
	}
	return list
}

// celItems are the proposals for the CEL reference ref.
func (s *server) celItems(g *graph.Graph, w *hclsyntax.Block, site *lang.Site, ref lang.Ref) []CompletionItem {
	var names []string
	prefix := ""
	if len(ref.Parts) > 0 {
		for _, p := range ref.Parts[:ref.Cursor] {
			names = append(names, p.Name)
		}
		prefix = ref.Prefix
	}
	var items []CompletionItem
	add := func(label string, kind int, detail string) {
		if strings.HasPrefix(label, prefix) {
			items = append(items, CompletionItem{Label: label, Kind: kind, Detail: detail})
		}
	}
	switch {
	case len(names) == 0:
		for _, r := range roots(g, site) {
			add(r, kindVariable, "")
		}
		for _, f := range s.funcs {
			if !strings.Contains(f.Name, ".") || strings.HasPrefix(f.Name, prefix) {
				items = appendFunc(items, f.Name, prefix, f.Signatures)
			}
		}
	case len(names) == 1 && names[0] == "steps":
		for _, n := range blockNames(w, g, "step") {
			detail := ""
			if st := stepOf(g, n); st != nil {
				detail = st.Action.Kind
			}
			add(n, kindField, detail)
		}
	case len(names) == 1 && names[0] == "input":
		for _, n := range blockNames(w, g, "input") {
			detail := ""
			if t := chainType(g, site, []string{"input", n}); t != nil {
				detail = t.String()
			}
			add(n, kindField, detail)
		}
	case len(names) == 1 && names[0] == "secrets":
		for _, n := range blockNames(w, g, "secret") {
			add(n, kindField, "string")
		}
	default:
		t := chainType(g, site, names)
		if t != nil && t.Kind == graph.KindObject {
			keys := make([]string, 0, len(t.Fields))
			for k := range t.Fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				add(k, kindField, t.Fields[k].String())
			}
		}
		if t != nil && (t.Kind == graph.KindString || t.Kind == graph.KindList || t.Kind == graph.KindMap || t.Kind == graph.KindAny) {
			// Member functions: x.size(), s.trim().
			for _, f := range s.funcs {
				if member(f.Signatures) {
					items = appendFunc(items, f.Name, prefix, f.Signatures)
				}
			}
		}
		if len(names) == 1 && names[0] == "url" {
			for _, f := range s.funcs {
				if rest, ok := strings.CutPrefix(f.Name, "url."); ok {
					items = appendFunc(items, rest, prefix, f.Signatures)
				}
			}
		}
	}
	return items
}

func appendFunc(items []CompletionItem, name, prefix string, sigs []string) []CompletionItem {
	if !strings.HasPrefix(name, prefix) {
		return items
	}
	detail := ""
	if len(sigs) > 0 {
		detail = sigs[0]
		if len(sigs) > 1 {
			detail += " …"
		}
	}
	return append(items, CompletionItem{Label: name, Kind: kindFunction, Detail: detail})
}

// member reports whether a function has a receiver-style overload.
func member(sigs []string) bool {
	for _, s := range sigs {
		if i := strings.IndexByte(s, '('); i > 0 && strings.Contains(s[:i], ".") {
			return true
		}
	}
	return false
}

// roots are the CEL variables visible at site (input, run, steps when the
// slot is not known).
func roots(g *graph.Graph, site *lang.Site) []string {
	sc := lang.ScopeAt(g, site)
	if sc == nil {
		return []string{"input", "run", "steps"}
	}
	return sc.VisibleNames()
}

// blockNames are the labels of the blocks of type t in the workflow: from
// the syntax tree, and from the last graph that compiled (a file being
// typed may have lost blocks to a syntax error).
func blockNames(w *hclsyntax.Block, g *graph.Graph, t string) []string {
	seen := map[string]bool{}
	var out []string
	addName := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, b := range labelled(w, t) {
		addName(b.Labels[0])
	}
	if g != nil {
		switch t {
		case "step":
			for _, s := range g.Steps {
				addName(s.Name)
			}
		case "input":
			for _, in := range g.Inputs {
				addName(in.Name)
			}
		case "secret":
			for _, s := range g.Secrets {
				addName(s.Name)
			}
		case "breaker":
			for _, b := range g.Breakers {
				addName(b.Name)
			}
		}
	}
	return out
}

// staticItems are the proposals for a static reference: step.X,
// breaker.X, secret.X.
func staticItems(g *graph.Graph, w *hclsyntax.Block, ref lang.Ref) []CompletionItem {
	if ref.Cursor != 1 || len(ref.Parts) < 2 {
		return nil
	}
	var items []CompletionItem
	kind := ref.Parts[0].Name
	if kind != "step" && kind != "breaker" && kind != "secret" {
		return nil
	}
	for _, n := range blockNames(w, g, kind) {
		if strings.HasPrefix(n, ref.Prefix) {
			items = append(items, CompletionItem{Label: n, Kind: kindField})
		}
	}
	return items
}

// nameItems are the attribute and block names the block at path accepts.
func nameItems(path []string, prefix string) []CompletionItem {
	sch, ok := lang.SchemaOf(path)
	if !ok {
		return nil
	}
	var items []CompletionItem
	for _, a := range sch.Attributes {
		if !strings.HasPrefix(a, prefix) {
			continue
		}
		it := CompletionItem{Label: a, Kind: kindProperty, InsertText: a + " = "}
		if doc := docOf(path, a); doc != "" {
			it.Documentation = &MarkupContent{Kind: "markdown", Value: doc}
		}
		items = append(items, it)
	}
	for _, b := range sch.Blocks {
		if !strings.HasPrefix(b.Type, prefix) {
			continue
		}
		it := CompletionItem{Label: b.Type, Kind: kindStruct, Detail: "block"}
		if e := docIndex()[blockKey(append(append([]string(nil), path...), b.Type))]; e != nil {
			it.Documentation = &MarkupContent{Kind: "markdown", Value: e.text(b.Type)}
		}
		items = append(items, it)
	}
	return items
}

// namePrefix returns the name being typed at off when the line holds
// nothing else before it (where an attribute or block starts).
func (d *document) namePrefix(off int) (string, bool) {
	src := d.text.src
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	i := off
	for i > start && isNameByte(src[i-1]) {
		i--
	}
	if len(bytes.TrimLeft(src[start:i], " \t")) != 0 {
		return "", false
	}
	return string(src[i:off]), true
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stringRefAt finds, on off's line, a quoted string still open at off (a
// string being typed, which the parser may have given up on), and the
// reference being typed in it.
func (d *document) stringRefAt(off int) (lang.Ref, bool) {
	src := d.text.src
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	open := -1
	for i := start; i < off; i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			if open < 0 {
				open = i + 1
			} else {
				open = -1
			}
		case '#':
			if open < 0 {
				return lang.Ref{}, false // a comment
			}
		}
	}
	if open < 0 {
		return lang.Ref{}, false
	}
	ref := lang.RefAt(src, open, off, off)
	return ref, len(ref.Parts) > 0
}

// workflowAt is the label of the workflow block that off is in, found on
// the tokens when the syntax tree lost it.
func (d *document) workflowAt(off int) string {
	path, _ := blockPathAt(d.text.src, off)
	if len(path) == 0 {
		return ""
	}
	return lastWorkflowLabel(d.text.src, off)
}

// lastWorkflowLabel is the label of the last `workflow "NAME"` header
// before off.
func lastWorkflowLabel(src []byte, off int) string {
	toks, _ := hclsyntax.LexConfig(src[:off], "", hcl.InitialPos)
	label := ""
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].Type == hclsyntax.TokenIdent && string(toks[i].Bytes) == "workflow" &&
			toks[i+1].Type == hclsyntax.TokenOQuote && toks[i+2].Type == hclsyntax.TokenQuotedLit &&
			(i == 0 || toks[i-1].Type == hclsyntax.TokenNewline) {
			label = string(toks[i+2].Bytes)
		}
	}
	return label
}

// blockPathAt returns the block types around off, found on the tokens
// (which, unlike the syntax tree, a half-typed file always has), and
// whether off is directly in a block's body (not inside an expression's
// brackets or braces).
func blockPathAt(src []byte, off int) ([]string, bool) {
	off = min(off, len(src))
	toks, _ := hclsyntax.LexConfig(src[:off], "", hcl.InitialPos)
	var stack []string // "" for braces and brackets of expressions
	lineStart := 0
	for i, t := range toks {
		switch t.Type {
		case hclsyntax.TokenNewline:
			lineStart = i + 1
		case hclsyntax.TokenComment:
			// A line comment (# or //) holds its newline: no newline
			// token follows it, and the next line starts after it.
			if bytes.HasSuffix(t.Bytes, []byte("\n")) {
				lineStart = i + 1
			}
		case hclsyntax.TokenOBrace:
			stack = append(stack, headerType(toks[lineStart:i]))
		case hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			stack = append(stack, "")
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	for _, t := range stack {
		if t == "" {
			return nil, false
		}
	}
	return stack, true
}

// headerType is the block type of the tokens of a line before an opening
// brace when they are a block header (a name, then quoted labels), else "".
func headerType(line []hclsyntax.Token) string {
	if len(line) == 0 || line[0].Type != hclsyntax.TokenIdent {
		return ""
	}
	for _, t := range line[1:] {
		switch t.Type {
		case hclsyntax.TokenOQuote, hclsyntax.TokenQuotedLit, hclsyntax.TokenCQuote, hclsyntax.TokenIdent:
		default:
			return ""
		}
	}
	return string(line[0].Bytes)
}

// innermost is the type of the innermost block of site ("" outside any).
func innermost(site *lang.Site) string {
	if len(site.Blocks) == 0 {
		return ""
	}
	return site.Blocks[len(site.Blocks)-1].Block.Type
}

// operationItems are the operationIds of the OpenAPI document that the
// openapi block at site names, for its operation string at off: those
// starting with what is typed before off.
func (s *server) operationItems(d *document, site *lang.Site, off int) []CompletionItem {
	b := site.Blocks[len(site.Blocks)-1].Block
	a := b.Body.Attributes["document"]
	if a == nil {
		return nil
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return nil
	}
	start := site.Attr.Expr.Range().Start.Byte + 1 // after the opening quote
	if start > off || off > len(d.text.src) {
		return nil
	}
	prefix := string(d.text.src[start:off])
	var items []CompletionItem
	for _, id := range lang.OpenAPIOperations(d.path, v.AsString(), s.documents, s.opts.FetchDocument) {
		if strings.HasPrefix(id, prefix) {
			items = append(items, CompletionItem{Label: id, Kind: kindValue, Detail: "operationId"})
		}
	}
	return items
}
