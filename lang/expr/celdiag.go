package expr

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// ExprLoc places an expression inside the HCL file: content is the value of
// the HCL string that holds it, rng the range of that string literal (its
// quotes included), off the byte offset of the expression in content (not 0
// inside templates).
//
// In a quoted string on one line, content byte b stands at column
// rng.Start.Column+1 plus the columns the content before it takes in the
// source, escapes such as \" counted as written. That is exact when the
// literal uses only the escapes HCL requires (\" \\ \n \r $${ %%{); a
// literal that also spells optional escapes (\t, \u00e9) is placed by
// code points, which can drift by the escapes' extra width. In a heredoc (a range over several lines), line k of content is
// line rng.Start.Line+1+k of the file; byte offsets are counted back from
// the closing marker, which is exact for <<EOT and approximate for an
// indented <<-EOT.
type ExprLoc struct {
	Content string
	Rng     hcl.Range
	off     int
}

// pos returns the file position of byte b of the content.
func (l ExprLoc) pos(b int) hcl.Pos {
	c := l.Content
	b = max(0, min(b, len(c)))
	if l.Rng.Start.Line == l.Rng.End.Line {
		cols, bytes := utf8.RuneCountInString(c[:b]), b
		if escapedLen(c) == l.Rng.End.Byte-l.Rng.Start.Byte-2 {
			// The literal was written with only the escapes HCL requires,
			// so the source text is known exactly: count its columns.
			cols, bytes = escapedWidth(c[:b], c[b:])
		}
		return hcl.Pos{
			Line:   l.Rng.Start.Line,
			Column: l.Rng.Start.Column + 1 + cols,
			Byte:   l.Rng.Start.Byte + 1 + bytes,
		}
	}
	ls := strings.LastIndexByte(c[:b], '\n') + 1
	contentEnd := l.Rng.End.Byte - (l.Rng.End.Column - 1)
	return hcl.Pos{
		Line:   l.Rng.Start.Line + 1 + strings.Count(c[:b], "\n"),
		Column: 1 + utf8.RuneCountInString(c[ls:b]),
		Byte:   max(l.Rng.Start.Byte, contentEnd-len(c)+b),
	}
}

// escapedLen is the length of c written as a quoted HCL string with only
// the escapes HCL requires: \" \\ \n \r, and $${ %%{ for ${ %{.
func escapedLen(c string) int {
	_, n := escapedWidth(c, "")
	return n
}

// escapedWidth returns the columns and bytes that c takes in a quoted HCL
// string written with only the required escapes; rest is the text after c
// (a $ or % at c's end is doubled when rest starts with {).
func escapedWidth(c, rest string) (cols, bytes int) {
	for i, r := range c {
		switch r {
		case '"', '\\', '\n', '\r':
			cols, bytes = cols+2, bytes+2
			continue
		case '$', '%':
			next := c[i+1:]
			if next == "" {
				next = rest
			}
			if strings.HasPrefix(next, "{") {
				cols, bytes = cols+2, bytes+2
				continue
			}
		}
		cols, bytes = cols+1, bytes+utf8.RuneLen(r)
	}
	return cols, bytes
}

// rangeOf returns the file range of expression bytes [start, end).
func (l ExprLoc) rangeOf(start, end int) hcl.Range {
	return hcl.Range{Filename: l.Rng.Filename, Start: l.pos(l.off + start), End: l.pos(l.off + end)}
}

// runeToByte converts a code point offset in src to a byte offset.
func runeToByte(src string, n int) int {
	if n <= 0 {
		return 0
	}
	i := 0
	for b := range src {
		if i == n {
			return b
		}
		i++
	}
	return len(src)
}

// locToByte converts a CEL location (1-based line, 0-based code point
// column) in src to a byte offset.
func locToByte(src string, loc common.Location) int {
	if loc == nil || loc.Line() < 1 {
		return 0
	}
	b := 0
	for line := 1; line < loc.Line(); line++ {
		i := strings.IndexByte(src[b:], '\n')
		if i < 0 {
			return len(src)
		}
		b += i + 1
	}
	return b + runeToByte(src[b:], loc.Column())
}

// tokenEnd returns the end of the identifier or token that starts at b.
func tokenEnd(src string, b int) int {
	e := b
	for e < len(src) {
		r, size := utf8.DecodeRuneInString(src[e:])
		if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			break
		}
		e += size
	}
	if e == b && b < len(src) {
		_, size := utf8.DecodeRuneInString(src[b:])
		e += size
	}
	return e
}

// skipToField moves from the dot of a selection to the field name.
func skipToField(src string, b int) int {
	for b < len(src) && (src[b] == '.' || src[b] == '?' || src[b] == ' ' || src[b] == '\t' || src[b] == '\n') {
		b++
	}
	return b
}

// exprRange is the range of the token where expression id starts.
func (l ExprLoc) exprRange(src string, info *ast.SourceInfo, id int64) hcl.Range {
	b := locToByte(src, info.GetStartLocation(id))
	return l.rangeOf(b, tokenEnd(src, b))
}

// fieldRange is the range of the field name of selection id.
func (l ExprLoc) fieldRange(src string, info *ast.SourceInfo, id int64) hcl.Range {
	b := skipToField(src, locToByte(src, info.GetStartLocation(id)))
	return l.rangeOf(b, tokenEnd(src, b))
}

func internalDiag(err error, loc ExprLoc) hcl.Diagnostics {
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Internal error",
		Detail:   fmt.Sprintf("The expression could not be processed: %v. This is a bug in flowrun; please report it.", err),
		Subject:  loc.rangeOf(0, 0).Ptr(),
	}}
}

// checkContext is what issueDiags needs to explain type-checking errors.
type checkContext struct {
	scope *Scope
	env   *scopeEnv
}

// CEL's messages issueDiags explains, compiled at the first type error
// rather than at every start of every flowrun process.
var (
	reUndeclared = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^undeclared reference to '([^']+)'`) })
	reUndefField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^undefined field '([^']+)'`) })
	reOverload   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^found no matching overload for '([^']+)' applied to '\((.*)\)'`)
	})
)

// issueDiags turns CEL parse (cc nil) or check issues into diagnostics
// placed in the HCL file.
func issueDiags(iss *cel.Issues, src string, loc ExprLoc, p *ParsedExpr, cc *checkContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	for _, e := range iss.Errors() {
		b := locToByte(src, e.Location)
		if b >= len(src) && len(src) > 0 {
			b = len(src) - 1
		}
		d := &hcl.Diagnostic{Severity: hcl.DiagError}
		end := tokenEnd(src, b)
		if cc == nil {
			var cut bool
			d.Summary = "Invalid expression"
			d.Detail, cut = syntaxDetail(e.Message, src, b)
			if cut {
				// What the parser says after text it could not read
				// at all is about that text: one error says it.
				d.Subject = loc.rangeOf(b, end).Ptr()
				return append(diags, d)
			}
		} else {
			d.Summary, d.Detail = explainCheck(e, p, cc)
			if reUndefField().MatchString(e.Message) {
				b = skipToField(src, b)
				end = tokenEnd(src, b)
			} else if name := calledName(e.Message); name != "" {
				// CEL places a call at its parenthesis: mark the name.
				if nb := nameBeforeParen(src, b, name); nb != b {
					b, end = nb, nb+len(name)
				}
			}
		}
		d.Subject = loc.rangeOf(b, end).Ptr()
		key := d.Summary + d.Detail + fmt.Sprint(b)
		if seen[key] {
			continue
		}
		seen[key] = true
		diags = append(diags, d)
	}
	return diags
}

// CEL's syntax messages syntaxDetail explains.
var reWordOp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Syntax error: (?:mismatched|extraneous) input '(and|or|not|AND|OR|NOT)'`)
})

// syntaxDetail words a CEL syntax error at byte b of src. The slips of
// people used to other languages (an unclosed string, = for ==, and/or/not
// for &&, ||, !) say the fix; the rest give the parser's message. cut is
// true for text the parser could not read as a token, after which its
// further messages are about that text only.
func syntaxDetail(msg, src string, b int) (detail string, cut bool) {
	m := strings.TrimSuffix(msg, ".")
	rest := ""
	if b >= 0 && b < len(src) {
		rest = src[b:]
	}
	if strings.HasPrefix(m, "Syntax error: token recognition error at: ") {
		switch {
		case strings.HasPrefix(rest, "'"), strings.HasPrefix(rest, `"`):
			q := rest[:1]
			return fmt.Sprintf("The string that starts here is not closed: end it with %s.", q), true
		case strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "=="):
			return "A single = is not an operator in CEL: compare with ==, as in input.env == 'prod'.", true
		}
		return fmt.Sprintf("This is not a valid CEL expression: %s. Fix the syntax at the marked position.", m), true
	}
	if w := reWordOp().FindStringSubmatch(m); w != nil {
		return fmt.Sprintf("The word %s is not an operator in CEL: write and as &&, or as || and not as !, as in input.a > 1 && !input.b.", w[1]), false
	}
	return fmt.Sprintf("This is not a valid CEL expression: %s. Fix the syntax at the marked position.", m), false
}

// calledName is the function name of an unknown-name or no-overload
// message ("" for any other, and for an operator).
func calledName(msg string) string {
	if m := reUndeclared().FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := reOverload().FindStringSubmatch(msg); m != nil {
		if _, op := operators.FindReverse(m[1]); !op {
			return m[1]
		}
	}
	return ""
}

// nameBeforeParen returns where name starts when it is written right
// before the parenthesis at b (a call), else b.
func nameBeforeParen(src string, b int, name string) int {
	if b >= len(src) || src[b] != '(' {
		return b
	}
	head := strings.TrimRight(src[:b], " \t\n")
	if !strings.HasSuffix(head, name) {
		return b
	}
	return len(head) - len(name)
}

// explainCheck says what a type-checking error means and how to fix it.
func explainCheck(e *common.Error, p *ParsedExpr, cc *checkContext) (summary, detail string) {
	msg := e.Message
	if m := reUndeclared().FindStringSubmatch(msg); m != nil {
		return "Unknown name", fmt.Sprintf("There is no variable or function named %s in %s. The variables visible here are %s.",
			m[1], cc.scope.what(), naming.QuoteList(cc.scope.VisibleNames()))
	}
	if m := reUndefField().FindStringSubmatch(msg); m != nil {
		return explainField(m[1], e.ExprID, p, cc)
	}
	if m := reOverload().FindStringSubmatch(msg); m != nil {
		fn := m[1]
		args := cc.env.types.describeNames(m[2])
		if sym, ok := operators.FindReverse(fn); ok {
			if strings.Contains(args, ",") {
				return "Type mismatch", fmt.Sprintf("The operator %s cannot be applied to %s. Make both sides the same kind of value, for example with string(x), double(x) or int(x).",
					sym, strings.Replace(args, ", ", " and ", 1))
			}
			return "Type mismatch", fmt.Sprintf("The operator %s cannot be applied to %s.", sym, args)
		}
		return "Type mismatch", fmt.Sprintf("The function %s cannot be applied to (%s). Check the types of its arguments.", fn, args)
	}
	return "Invalid expression", upperFirst(strings.TrimSuffix(cc.env.types.describeNames(msg), ".")) + "."
}

// explainField explains a selection of a field an object type lacks.
func explainField(field string, id int64, p *ParsedExpr, cc *checkContext) (summary, detail string) {
	var operand ast.Expr
	found := ast.MatchDescendants(ast.NavigateAST(p.ast.NativeRep()), func(e ast.NavigableExpr) bool { return e.ID() == id })
	if len(found) > 0 && found[0].Kind() == ast.SelectKind {
		operand = found[0].AsSelect().Operand()
	}
	t := staticType(operand, cc.env.vars)
	path := exprPath(operand)
	if t == nil || t.Kind != graph.KindObject {
		return "Unknown field", fmt.Sprintf("There is no field %q here. Check the spelling of the field name.", field)
	}
	names := fieldNames(t)
	hint := ""
	if s := closest(field, names); s != "" {
		hint = fmt.Sprintf(" Did you mean %q?", s)
	}
	// its names the fields, or says there are none.
	its := "It has no fields."
	if len(names) > 0 {
		its = fmt.Sprintf("Its fields are %s.", naming.QuoteList(names))
	}
	switch {
	case path == "input" && len(names) == 0:
		return "Unknown input", fmt.Sprintf("There is no input %q: this workflow declares no inputs. Declare it with an input %q { type = ... } block, or remove the reference.", field, field)
	case path == "input":
		return "Unknown input", fmt.Sprintf("The workflow declares no input %q. The declared inputs are %s.%s", field, naming.QuoteList(names), hint)
	case path == "run":
		return "Unknown field", fmt.Sprintf("run has no field %q. %s%s", field, its, hint)
	case strings.HasPrefix(path, "steps.") && strings.Count(path, ".") == 1:
		return "Unknown field", fmt.Sprintf("%s has no field %q. A step result has the fields %s.%s", path, field, naming.QuoteList(names), hint)
	case path != "":
		return "Unknown field", fmt.Sprintf("%s has no field %q. %s%s", path, field, its, hint)
	}
	return "Unknown field", fmt.Sprintf("This object has no field %q. %s%s", field, its, hint)
}

// staticType resolves the flowrun type of a chain of selections and
// indexes rooted at a declared variable, or nil.
func staticType(e ast.Expr, vars map[string]*graph.Type) *graph.Type {
	if e == nil {
		return nil
	}
	switch e.Kind() {
	case ast.IdentKind:
		return vars[e.AsIdent()]
	case ast.SelectKind:
		t := staticType(e.AsSelect().Operand(), vars)
		switch {
		case t == nil:
			return nil
		case t.Kind == graph.KindObject:
			return t.Fields[e.AsSelect().FieldName()]
		case t.Kind == graph.KindMap:
			return t.Elem
		}
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == operators.Index && len(c.Args()) == 2 {
			t := staticType(c.Args()[0], vars)
			if t != nil && (t.Kind == graph.KindList || t.Kind == graph.KindMap) {
				return t.Elem
			}
		}
	}
	return nil
}

// exprPath renders a chain of selections (input.a.b), or "".
func exprPath(e ast.Expr) string {
	if e == nil {
		return ""
	}
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent()
	case ast.SelectKind:
		if p := exprPath(e.AsSelect().Operand()); p != "" {
			return p + "." + e.AsSelect().FieldName()
		}
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == operators.Index && len(c.Args()) == 2 {
			if p := exprPath(c.Args()[0]); p != "" {
				return p + "[...]"
			}
		}
	}
	return ""
}

// closest returns the candidate nearest to s when it is near enough to be
// a likely typo, or "".
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := naming.EditDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}
