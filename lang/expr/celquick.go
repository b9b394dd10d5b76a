package expr

import (
	"strconv"
	"strings"
)

// Plain template expressions without a parse.
//
// Most expressions of a long workflow's templates are plain: a reference
// (input.name, steps.s41.output.text), a whole number, or two of those
// joined by one arithmetic or comparison operator (steps.s41.output.v + 1).
// A template's expressions are shed as soon as they are parsed
// (ParsedTemplate.Shed): only their references, shape and canonical text
// are kept, and the tree is parsed again when it is needed. quickExpr
// reads a plain expression and writes those directly, as parsing it and
// shedding the tree gives them: the references with the expression ids
// the parser assigns (in source order: the identifier, each selection's
// dot, the operator, then the right operand), the shape writeShape writes
// and the text cel.AstToString writes. Anything else (other whitespace
// than spaces, a reserved word, a literal other than a plain decimal
// integer, a call, more than one operator) goes to the parser.
// TestQuickExprMatchesParser and FuzzQuickExpr hold it to the parser.

// celReserved are CEL's reserved words, which the parser refuses as names
// (and reads true, false and null as literals).
var celReserved = map[string]bool{
	"as": true, "break": true, "const": true, "continue": true, "else": true, "false": true, "for": true,
	"function": true, "if": true, "import": true, "in": true, "let": true, "loop": true, "package": true,
	"namespace": true, "null": true, "return": true, "true": true, "var": true, "void": true, "while": true,
}

// quickOps are the binary operators quickExpr reads, with their functions.
var quickOps = map[string]string{
	"+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_",
	"==": "_==_", "!=": "_!=_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_",
}

// quickOperand is a reference a.b.c (names) or a whole number (names nil).
type quickOperand struct {
	names []string
	num   int64
}

// quickExpr returns src, an expression of a template standing at loc,
// parsed and shed, when it is plain; ok is false otherwise.
func quickExpr(src string, loc ExprLoc) (p *ParsedExpr, ok bool) {
	i := skipSpaces(src, 0)
	lhs, i, ok := quickReadOperand(src, i)
	if !ok {
		return nil, false
	}
	i = skipSpaces(src, i)
	if i == len(src) {
		p = &ParsedExpr{src: src, loc: loc}
		var id int64
		p.refs = lhs.appendRefs(nil, &id)
		var b strings.Builder
		sh := &exprShape{}
		lhs.writeShape(&b, &sh.steps)
		sh.key = b.String()
		sh.text = lhs.text()
		p.shape = sh
		return p, true
	}
	j := i
	for j < len(src) && strings.IndexByte("+-*/%=!<>", src[j]) >= 0 {
		j++
	}
	op := src[i:j]
	fn, known := quickOps[op]
	if !known {
		return nil, false
	}
	k := skipSpaces(src, j)
	if k == j && (op == "-" || op == "+") {
		// -1 and +1 right after an operator: leave signs to the parser.
		return nil, false
	}
	rhs, k, ok := quickReadOperand(src, k)
	if !ok || skipSpaces(src, k) != len(src) {
		return nil, false
	}
	p = &ParsedExpr{src: src, loc: loc}
	var id int64
	refs := lhs.appendRefs(nil, &id)
	id++ // the operator's
	p.refs = rhs.appendRefs(refs, &id)
	var b strings.Builder
	sh := &exprShape{}
	b.WriteString("c")
	b.WriteString(strconv.Quote(fn))
	b.WriteString("2")
	lhs.writeShape(&b, &sh.steps)
	rhs.writeShape(&b, &sh.steps)
	sh.key = b.String()
	sh.text = lhs.text() + " " + op + " " + rhs.text()
	p.shape = sh
	return p, true
}

// skipSpaces returns the index of the first byte from i that is not a
// space.
func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// quickReadOperand reads an operand at src[i]: a reference of names joined
// by dots with nothing between them, or a decimal number without a leading
// zero that fits an int64. It returns the index after it.
func quickReadOperand(src string, i int) (quickOperand, int, bool) {
	var o quickOperand
	if i < len(src) && src[i] >= '0' && src[i] <= '9' {
		j := i
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		if j < len(src) && (isCELNameByte(src[j]) || src[j] == '.') || (src[i] == '0' && j-i > 1) || j-i > 18 {
			return o, i, false
		}
		n, err := strconv.ParseInt(src[i:j], 10, 64)
		return quickOperand{num: n}, j, err == nil
	}
	for {
		j := i
		if j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
			for j < len(src) && isCELNameByte(src[j]) {
				j++
			}
		}
		name := src[i:j]
		if name == "" || celReserved[name] {
			return o, i, false
		}
		o.names = append(o.names, name)
		if j == len(src) || src[j] != '.' {
			return o, j, true
		}
		i = j + 1
	}
}

func isCELNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// appendRefs appends the operand's use of a flowrun variable, as
// collectRefs finds it, numbering its nodes from *id as the parser does:
// the identifier, then each selection.
func (o quickOperand) appendRefs(refs []varRef, id *int64) []varRef {
	if o.names == nil {
		*id++
		return refs
	}
	first := *id + 1
	*id += int64(len(o.names))
	if !flowVars[o.names[0]] {
		return refs
	}
	if len(o.names) == 1 {
		return append(refs, varRef{name: o.names[0], id: first, ident: first})
	}
	return append(refs, varRef{name: o.names[0], field: o.names[1], id: first + 1, ident: first})
}

// writeShape writes the operand as writeShape writes its tree.
func (o quickOperand) writeShape(b *strings.Builder, steps *[]string) {
	if o.names == nil {
		b.WriteString("li" + strconv.FormatInt(o.num, 10) + ";")
		return
	}
	for k := len(o.names) - 1; k >= 1; k-- {
		if k == 1 && o.names[0] == "steps" {
			b.WriteString("Ss")
			*steps = append(*steps, o.names[1])
			return
		}
		b.WriteString("s")
		b.WriteString(strconv.Quote(o.names[k]))
	}
	b.WriteString("i")
	b.WriteString(strconv.Quote(o.names[0]))
}

// text is the operand as cel.AstToString writes it.
func (o quickOperand) text() string {
	if o.names == nil {
		return strconv.FormatInt(o.num, 10)
	}
	return strings.Join(o.names, ".")
}
