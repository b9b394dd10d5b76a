package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A parser for the plain part of HCL.
//
// hclsyntax lexes a file into tokens, measuring every token's columns in
// grapheme clusters, and parses the tokens; for a long workflow that was
// most of the compile. Most workflow text is plain: ASCII, blocks with
// labels, attributes whose values are numbers, true, false, null, strings
// without escapes or template sequences, references (a.b.c), function
// calls, tuples and objects of those, and comments. quickParseBody parses
// such text straight from the bytes into the syntax tree
// hclsyntax.ParseConfig gives for it: the same nodes, fields and ranges (in
// ASCII a byte is a column). It declines anything else: any other byte or
// construct (a namespaced call or an expanded argument, an operator, an
// escape, a heredoc, an index), and any text hclsyntax would report; the
// caller then parses with hclsyntax, so diagnostics are always hclsyntax's.
// TestQuickParseMatchesHCL and FuzzQuickParse hold it to
// hclsyntax.ParseConfig.

// quickParser parses src, whose first byte is at base in its file.
type quickParser struct {
	src       []byte
	filename  string
	base      hcl.Pos
	i         int // the next byte
	line, col int // its position
	// names holds each identifier read once: block types and attribute
	// names repeat in every step.
	names map[string]string
}

// Nodes allocated together, for fewer allocations: a block with its body
// (a step block keeps both: predecodeSteps empties the body in place), a
// block's one label with its range, and a quoted string with its one part.
type (
	quickBlock struct {
		block hclsyntax.Block
		body  hclsyntax.Body
	}
	quickLabel struct {
		label [1]string
		rng   [1]hcl.Range
	}
	quickString struct {
		tmpl  hclsyntax.TemplateExpr
		lit   hclsyntax.LiteralValueExpr
		parts [1]hclsyntax.Expression
	}
)

// quickParseBody parses src, placed at start in the file, as
// hclsyntax.ParseConfig(src, filename, start) does; ok is false when it
// declines.
func quickParseBody(src []byte, filename string, start hcl.Pos) (body *hclsyntax.Body, ok bool) {
	for _, c := range src {
		if (c < ' ' || c > '~') && c != '\n' && c != '\t' {
			return nil, false
		}
	}
	p := &quickParser{src: src, filename: filename, base: start, line: start.Line, col: start.Column}
	body, _, ok = p.body(nil, nil)
	return body, ok
}

// quickParseFile is quickParseBody for a whole file, returned as
// hclsyntax.ParseConfig returns it.
func quickParseFile(src []byte, filename string) (*hcl.File, bool) {
	body, ok := quickParseBody(src, filename, hcl.InitialPos)
	if !ok {
		return nil, false
	}
	// The file's navigation (hcl.File.Nav, of a type hclsyntax does not
	// export) points at its root body: take that of an empty file and
	// put the parsed body there.
	f, diags := hclsyntax.ParseConfig(nil, filename, hcl.InitialPos)
	root, isBody := f.Body.(*hclsyntax.Body)
	if diags.HasErrors() || !isBody {
		return nil, false
	}
	*root = *body
	f.Bytes = src
	return f, true
}

func (p *quickParser) pos() hcl.Pos {
	return hcl.Pos{Line: p.line, Column: p.col, Byte: p.base.Byte + p.i}
}

func (p *quickParser) rangeFrom(start hcl.Pos) hcl.Range {
	return hcl.Range{Filename: p.filename, Start: start, End: p.pos()}
}

// at reports whether the next byte is c.
func (p *quickParser) at(c byte) bool { return p.i < len(p.src) && p.src[p.i] == c }

// atPair reports whether the next two bytes are c and d.
func (p *quickParser) atPair(c, d byte) bool {
	return p.i+1 < len(p.src) && p.src[p.i] == c && p.src[p.i+1] == d
}

// advance moves over n bytes, none of them a newline.
func (p *quickParser) advance(n int) {
	p.i += n
	p.col += n
}

// newline moves over a newline.
func (p *quickParser) newline() {
	p.i++
	p.line++
	p.col = 1
}

// token moves over n bytes on one line and returns their range.
func (p *quickParser) token(n int) hcl.Range {
	start := p.pos()
	p.advance(n)
	return p.rangeFrom(start)
}

// skipSpace moves over blanks and block comments, and over a line comment
// that ends the text without a newline (hclsyntax drops both); ok is false
// at an unterminated block comment.
func (p *quickParser) skipSpace() bool {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ' ' || c == '\t':
			p.advance(1)
		case p.atPair('/', '*'):
			p.advance(2)
			for !p.atPair('*', '/') {
				if p.i >= len(p.src) {
					return false
				}
				if p.src[p.i] == '\n' {
					p.newline()
				} else {
					p.advance(1)
				}
			}
			p.advance(2)
		case c == '#' || p.atPair('/', '/'):
			j := p.i
			for j < len(p.src) && p.src[j] != '\n' {
				j++
			}
			if j < len(p.src) {
				return true // a line comment: hclsyntax reads it as a newline
			}
			p.advance(j - p.i)
		default:
			return true
		}
	}
	return true
}

// lineEnd moves over the newline, or the line comment and its newline,
// after skipSpace and returns its range (hclsyntax gives a line comment
// read as a newline the comment's range); ok is false when there is none.
func (p *quickParser) lineEnd() (hcl.Range, bool) {
	start := p.pos()
	switch {
	case p.at('\n'):
	case p.at('#'), p.atPair('/', '/'):
		for p.src[p.i] != '\n' { // skipSpace saw the newline
			p.advance(1)
		}
	default:
		return hcl.Range{}, false
	}
	p.newline()
	return p.rangeFrom(start), true
}

// skipAll moves over blanks, comments and newlines, where newlines mean
// nothing (in a tuple).
func (p *quickParser) skipAll() bool {
	for {
		if !p.skipSpace() {
			return false
		}
		if _, ok := p.lineEnd(); !ok {
			return true
		}
	}
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '-'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ident reads an identifier, which starts at the next byte.
func (p *quickParser) ident() (string, hcl.Range) {
	j := p.i + 1
	for j < len(p.src) && isIdentByte(p.src[j]) {
		j++
	}
	name, ok := p.names[string(p.src[p.i:j])]
	if !ok {
		if p.names == nil {
			p.names = map[string]string{}
		}
		name = string(p.src[p.i:j])
		p.names[name] = name
	}
	return name, p.token(j - p.i)
}

// label reads a block label, which starts at the next byte: labels are
// mostly names of their own, not worth keeping in names.
func (p *quickParser) label() (string, hcl.Range) {
	j := p.i + 1
	for j < len(p.src) && isIdentByte(p.src[j]) {
		j++
	}
	name := string(p.src[p.i:j])
	return name, p.token(j - p.i)
}

// atIdentStart reports whether an identifier starts at the next byte.
func (p *quickParser) atIdentStart() bool { return p.i < len(p.src) && isIdentStart(p.src[p.i]) }

// atEquals reports whether the next byte is an equals sign alone (not ==
// or =>).
func (p *quickParser) atEquals() bool {
	return p.at('=') && !p.atPair('=', '=') && !p.atPair('=', '>')
}

// body parses the items of a body, as hclsyntax's parser.ParseBody does:
// with open nil, up to the end of the text; else, after that opening brace,
// up to its closing brace, which it reads and whose range it returns. The
// body is written to into, or to a new one when into is nil.
func (p *quickParser) body(open *hcl.Range, into *hclsyntax.Body) (*hclsyntax.Body, hcl.Range, bool) {
	attrs := hclsyntax.Attributes{}
	blocks := hclsyntax.Blocks{}
	top := open == nil
	var startRange, endRange hcl.Range
	if !top {
		startRange = *open
	}
	first := top
	for {
		if !p.skipSpace() {
			return nil, endRange, false
		}
		if first {
			// The top body starts at its first token.
			startRange = p.peekRange()
			first = false
		}
		if top && p.i == len(p.src) {
			endRange = p.rangeFrom(p.pos())
			break
		}
		if !top && p.at('}') {
			endRange = p.token(1)
			break
		}
		if _, ok := p.lineEnd(); ok {
			continue
		}
		if !p.atIdentStart() {
			return nil, endRange, false
		}
		name, nameRange := p.ident()
		if !p.skipSpace() {
			return nil, endRange, false
		}
		switch {
		case p.atEquals():
			attr, ok := p.attribute(name, nameRange, false)
			if !ok {
				return nil, endRange, false
			}
			if _, dup := attrs[name]; dup {
				return nil, endRange, false
			}
			attrs[name] = attr
		case p.at('"') || p.at('{') || p.atIdentStart():
			b, ok := p.block(name, nameRange)
			if !ok {
				return nil, endRange, false
			}
			blocks = append(blocks, b)
		default:
			return nil, endRange, false
		}
	}
	if into == nil {
		into = &hclsyntax.Body{}
	}
	*into = hclsyntax.Body{
		Attributes: attrs,
		Blocks:     blocks,
		SrcRange:   hcl.RangeBetween(startRange, endRange),
		EndRange:   hcl.Range{Filename: endRange.Filename, Start: endRange.End, End: endRange.End},
	}
	return into, endRange, true
}

// peekRange is the range of the token at the next byte after skipSpace: a
// newline, a line comment, the end of the text, or the first byte of
// anything else (the caller declines anything but an identifier there,
// whose range it then is).
func (p *quickParser) peekRange() hcl.Range {
	saved := *p
	defer func() { *p = saved }()
	if r, ok := p.lineEnd(); ok {
		return r
	}
	if p.atIdentStart() {
		_, r := p.ident()
		return r
	}
	return p.rangeFrom(p.pos())
}

// attribute parses an attribute from its equals sign, the next byte, and
// reads the newline that ends it (unless it is the single attribute of a
// one-line block).
func (p *quickParser) attribute(name string, nameRange hcl.Range, singleLine bool) (*hclsyntax.Attribute, bool) {
	eq := p.token(1)
	if !p.skipSpace() {
		return nil, false
	}
	e, ok := p.expr(true)
	if !ok || !p.skipSpace() {
		return nil, false
	}
	if !singleLine {
		if _, ok := p.lineEnd(); !ok && p.i != len(p.src) {
			return nil, false
		}
	}
	return &hclsyntax.Attribute{
		Name:        name,
		Expr:        e,
		SrcRange:    hcl.RangeBetween(nameRange, e.Range()),
		NameRange:   nameRange,
		EqualsRange: eq,
	}, true
}

// block parses a block from its labels, after its type, and reads the
// newline after its closing brace.
func (p *quickParser) block(typ string, typeRange hcl.Range) (*hclsyntax.Block, bool) {
	var labels []string
	var labelRanges []hcl.Range
	for !p.at('{') {
		var s string
		var r hcl.Range
		switch {
		case p.at('"'):
			q, qr, ok := p.quoted()
			if !ok {
				return nil, false
			}
			s, r = q, hcl.RangeBetween(qr[0], qr[2])
		case p.atIdentStart():
			s, r = p.label()
		default:
			return nil, false
		}
		if labels == nil {
			l := &quickLabel{label: [1]string{s}, rng: [1]hcl.Range{r}}
			labels, labelRanges = l.label[:], l.rng[:]
		} else {
			labels = append(labels, s)
			labelRanges = append(labelRanges, r)
		}
		if !p.skipSpace() {
			return nil, false
		}
	}
	qb := &quickBlock{}
	open := p.token(1)
	if !p.skipSpace() {
		return nil, false
	}
	var body *hclsyntax.Body
	var closeRange hcl.Range
	if p.i == len(p.src) || p.at('\n') || p.at('#') || p.atPair('/', '/') || p.at('}') {
		var ok bool
		if body, closeRange, ok = p.body(&open, &qb.body); !ok {
			return nil, false
		}
	} else {
		// A one-line block of a single attribute.
		if !p.atIdentStart() {
			return nil, false
		}
		name, nameRange := p.ident()
		if !p.skipSpace() || !p.atEquals() {
			return nil, false
		}
		attr, ok := p.attribute(name, nameRange, true)
		if !ok || !p.at('}') {
			return nil, false
		}
		closeRange = p.token(1)
		body = &qb.body
		*body = hclsyntax.Body{
			Attributes: hclsyntax.Attributes{name: attr},
			SrcRange:   attr.SrcRange,
			EndRange:   hcl.Range{Filename: attr.SrcRange.Filename, Start: attr.SrcRange.End, End: attr.SrcRange.End},
		}
	}
	if !p.skipSpace() {
		return nil, false
	}
	if _, ok := p.lineEnd(); !ok && p.i != len(p.src) {
		return nil, false
	}
	qb.block = hclsyntax.Block{
		Type:            typ,
		Labels:          labels,
		Body:            body,
		TypeRange:       typeRange,
		LabelRanges:     labelRanges,
		OpenBraceRange:  open,
		CloseBraceRange: closeRange,
	}
	return &qb.block, true
}

// quoted reads a string of printable ASCII without escapes or template
// sequences ($ and % are left to hclsyntax), from its opening quote, the
// next byte: its text, and the ranges of its opening quote, its text and
// its closing quote.
func (p *quickParser) quoted() (string, [3]hcl.Range, bool) {
	var r [3]hcl.Range
	r[0] = p.token(1)
	j := p.i
	for j < len(p.src) && p.src[j] != '"' {
		switch c := p.src[j]; {
		case c == '\\' || c == '$' || c == '%' || c < ' ' || c > '~':
			return "", r, false
		}
		j++
	}
	if j == len(p.src) {
		return "", r, false
	}
	s := string(p.src[p.i:j])
	r[1] = p.token(j - p.i)
	r[2] = p.token(1)
	return s, r, true
}

// expr parses an expression at the next byte: one of the terms quickParse
// takes. Whether an expression ends where it stops is the caller's to
// check: it declines anything but what may follow there. nl tells
// whether newlines end expressions here (not in a tuple).
func (p *quickParser) expr(nl bool) (hclsyntax.Expression, bool) {
	if p.i == len(p.src) {
		return nil, false
	}
	switch c := p.src[p.i]; {
	case c == '"':
		s, r, ok := p.quoted()
		if !ok {
			return nil, false
		}
		lit := r[1]
		if s == "" {
			// hclsyntax places an empty string's text after the closing
			// quote.
			lit = hcl.Range{Filename: p.filename, Start: r[2].End, End: r[2].End}
		}
		qs := &quickString{lit: hclsyntax.LiteralValueExpr{Val: cty.StringVal(s), SrcRange: lit}}
		qs.parts[0] = &qs.lit
		qs.tmpl = hclsyntax.TemplateExpr{Parts: qs.parts[:], SrcRange: hcl.RangeBetween(r[0], r[2])}
		return &qs.tmpl, true
	case isDigit(c):
		return p.number()
	case isIdentStart(c):
		return p.reference(nl)
	case c == '[':
		return p.tuple()
	case c == '{':
		return p.object()
	}
	return nil, false
}

// number reads a number literal as hclsyntax's scanner cuts it.
func (p *quickParser) number() (hclsyntax.Expression, bool) {
	digits := func(j int) int {
		for j < len(p.src) && isDigit(p.src[j]) {
			j++
		}
		return j
	}
	j := digits(p.i)
	if j+1 < len(p.src) && p.src[j] == '.' && isDigit(p.src[j+1]) {
		j = digits(j + 1)
	}
	if j < len(p.src) && (p.src[j] == 'e' || p.src[j] == 'E') {
		k := j + 1
		if k < len(p.src) && (p.src[k] == '+' || p.src[k] == '-') {
			k++
		}
		if k < len(p.src) && isDigit(p.src[k]) {
			j = digits(k)
		}
	}
	v, err := cty.ParseNumberVal(string(p.src[p.i:j]))
	if err != nil {
		return nil, false
	}
	return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: p.token(j - p.i)}, true
}

// reference reads true, false, null or a reference (a.b.c).
func (p *quickParser) reference(nl bool) (hclsyntax.Expression, bool) {
	name, r := p.ident()
	switch name {
	case "true":
		return &hclsyntax.LiteralValueExpr{Val: cty.True, SrcRange: r}, true
	case "false":
		return &hclsyntax.LiteralValueExpr{Val: cty.False, SrcRange: r}, true
	case "null":
		return &hclsyntax.LiteralValueExpr{Val: cty.NullVal(cty.DynamicPseudoType), SrcRange: r}, true
	}
	saved := *p
	if !p.skipInExpr(nl) {
		return nil, false
	}
	if p.at('(') {
		return p.call(name, r)
	}
	*p = saved
	t := &hclsyntax.ScopeTraversalExpr{Traversal: hcl.Traversal{hcl.TraverseRoot{Name: name, SrcRange: r}}, SrcRange: r}
	for {
		saved := *p
		if !p.skipInExpr(nl) {
			return nil, false
		}
		if p.at('(') || p.atPair(':', ':') {
			return nil, false // a call after a traversal, or a namespaced one
		}
		if !p.at('.') {
			*p = saved
			return t, true
		}
		dot := p.token(1)
		if !p.skipInExpr(nl) || !p.atIdentStart() {
			return nil, false // a splat, a legacy index or a mistake
		}
		attr, ar := p.ident()
		step := hcl.RangeBetween(dot, ar)
		t.Traversal = append(t.Traversal, hcl.TraverseAttr{Name: attr, SrcRange: step})
		t.SrcRange = hcl.RangeBetween(t.SrcRange, step)
	}
}

// call reads a function call from its opening parenthesis, the next byte,
// after its name (not namespaced, no expanded final argument).
func (p *quickParser) call(name string, nameRange hcl.Range) (hclsyntax.Expression, bool) {
	open := p.token(1)
	if !p.skipAll() {
		return nil, false
	}
	args, ok := p.items(')')
	if !ok {
		return nil, false
	}
	close := p.token(1)
	return &hclsyntax.FunctionCallExpr{Name: name, Args: args, NameRange: nameRange, OpenParenRange: open, CloseParenRange: close}, true
}

// items reads the comma-separated expressions of a call's arguments or a
// tuple (an optional trailing comma, newlines and comments anywhere) up to
// end, the next byte once it returns true.
func (p *quickParser) items(end byte) ([]hclsyntax.Expression, bool) {
	var exprs []hclsyntax.Expression
	for !p.at(end) {
		e, ok := p.expr(false)
		if !ok || !p.skipAll() {
			return nil, false
		}
		exprs = append(exprs, e)
		if p.at(end) {
			break
		}
		if !p.at(',') {
			return nil, false
		}
		p.advance(1)
		if !p.skipAll() {
			return nil, false
		}
	}
	return exprs, true
}

// skipInExpr moves over what comes between tokens of an expression: with
// nl, blanks and block comments, else also newlines and line comments.
func (p *quickParser) skipInExpr(nl bool) bool {
	if nl {
		return p.skipSpace()
	}
	return p.skipAll()
}

// tuple reads a tuple constructor from its opening bracket.
func (p *quickParser) tuple() (hclsyntax.Expression, bool) {
	open := p.token(1)
	if !p.skipAll() || p.atFor() {
		return nil, false
	}
	exprs, ok := p.items(']')
	if !ok {
		return nil, false
	}
	close := p.token(1)
	return &hclsyntax.TupleConsExpr{Exprs: exprs, SrcRange: hcl.RangeBetween(open, close), OpenRange: open}, true
}

// atFor reports whether the next bytes are the keyword for (a for
// expression, which quickParse leaves to hclsyntax).
func (p *quickParser) atFor() bool {
	if !p.atIdentStart() {
		return false
	}
	saved := *p
	name, _ := p.ident()
	*p = saved
	return name == "for"
}

// object reads an object constructor from its opening brace.
func (p *quickParser) object() (hclsyntax.Expression, bool) {
	open := p.token(1)
	saved := *p
	if !p.skipAll() || p.atFor() {
		return nil, false
	}
	*p = saved
	var items []hclsyntax.ObjectConsItem
	for {
		if !p.skipSpace() {
			return nil, false
		}
		if _, ok := p.lineEnd(); ok {
			continue
		}
		if p.at('}') {
			break
		}
		key, ok := p.expr(true)
		if !ok || !p.skipSpace() {
			return nil, false
		}
		if !p.atEquals() && !(p.at(':') && !p.atPair(':', ':')) {
			return nil, false
		}
		p.advance(1)
		if !p.skipSpace() {
			return nil, false
		}
		value, ok := p.expr(true)
		if !ok || !p.skipSpace() {
			return nil, false
		}
		items = append(items, hclsyntax.ObjectConsItem{KeyExpr: &hclsyntax.ObjectConsKeyExpr{Wrapped: key}, ValueExpr: value})
		if p.at('}') {
			break
		}
		if p.at(',') {
			p.advance(1)
			continue
		}
		if _, ok := p.lineEnd(); !ok {
			return nil, false
		}
	}
	close := p.token(1)
	return &hclsyntax.ObjectConsExpr{Items: items, SrcRange: hcl.RangeBetween(open, close), OpenRange: open}, true
}
