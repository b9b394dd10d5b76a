package expr

import (
	"slices"
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

// quickOperand is a reference a.b.c (names) or a whole number (names
// nil); src is its text.
type quickOperand struct {
	names []string
	num   int64
	src   string
}

// isRef reports whether the operand is a reference to a flowrun variable.
func (o quickOperand) isRef() bool { return o.names != nil && flowVars[o.names[0]] }

// quickExpr returns src, an expression of a template standing at loc,
// parsed and shed, when it is plain; ok is false otherwise.
func quickExpr(src string, loc ExprLoc) (p *ParsedExpr, ok bool) {
	start := skipSpaces(src, 0)
	lhs, i, ok := quickReadOperand(src, start)
	if !ok {
		return nil, false
	}
	end := i
	i = skipSpaces(src, i)
	var op, fn string
	var rhs quickOperand
	if i < len(src) {
		j := i
		for j < len(src) && strings.IndexByte("+-*/%=!<>", src[j]) >= 0 {
			j++
		}
		op = src[i:j]
		var known bool
		if fn, known = quickOps[op]; !known {
			return nil, false
		}
		k := skipSpaces(src, j)
		if k == j && (op == "-" || op == "+") {
			// -1 and +1 right after an operator: leave signs to the parser.
			return nil, false
		}
		if rhs, k, ok = quickReadOperand(src, k); !ok || skipSpaces(src, k) != len(src) {
			return nil, false
		}
		end = k
	}
	p = &ParsedExpr{src: src, loc: loc}
	var id int64
	var refs []varRef
	if lhs.isRef() || op != "" && rhs.isRef() {
		refs = make([]varRef, 0, 2)
	}
	refs = lhs.appendRefs(refs, &id)
	sh := &exprShape{}
	var b strings.Builder
	b.Grow(2*len(src) + 16)
	if op == "" {
		lhs.writeShape(&b, &sh.steps)
		sh.text = lhs.text()
	} else {
		id++ // the operator's
		refs = rhs.appendRefs(refs, &id)
		b.WriteString(`c"`)
		b.WriteString(fn)
		b.WriteString(`"2`)
		lhs.writeShape(&b, &sh.steps)
		rhs.writeShape(&b, &sh.steps)
		// The canonical text is the source's when the source is written
		// that way.
		if t := src[start:end]; len(t) == len(lhs.src)+len(op)+len(rhs.src)+2 && t[len(lhs.src)] == ' ' && t[len(t)-len(rhs.src)-1] == ' ' {
			sh.text = t
		} else {
			sh.text = lhs.text() + " " + op + " " + rhs.text()
		}
	}
	p.refs = refs
	sh.key = b.String()
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
	start := i
	if i < len(src) && src[i] >= '0' && src[i] <= '9' {
		j := i
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		if j < len(src) && (isCELNameByte(src[j]) || src[j] == '.') || (src[i] == '0' && j-i > 1) || j-i > 18 {
			return o, i, false
		}
		n, err := strconv.ParseInt(src[i:j], 10, 64)
		return quickOperand{num: n, src: src[i:j]}, j, err == nil
	}
	var names [8]string
	k := 0
	for {
		j := i
		if j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
			for j < len(src) && isCELNameByte(src[j]) {
				j++
			}
		}
		name := src[i:j]
		if name == "" || celReserved[name] || k == len(names) {
			return o, i, false
		}
		names[k] = name
		k++
		if j == len(src) || src[j] != '.' {
			o.names = slices.Clone(names[:k])
			o.src = src[start:j]
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

// writeShape writes the operand as writeShape writes its tree (names
// need no escaping in strconv.Quote's quotes).
func (o quickOperand) writeShape(b *strings.Builder, steps *[]string) {
	if o.names == nil {
		b.WriteString("li")
		b.WriteString(o.src)
		b.WriteString(";")
		return
	}
	for k := len(o.names) - 1; k >= 1; k-- {
		if k == 1 && o.names[0] == "steps" {
			b.WriteString("Ss")
			*steps = append(*steps, o.names[1])
			return
		}
		b.WriteString(`s"`)
		b.WriteString(o.names[k])
		b.WriteString(`"`)
	}
	b.WriteString(`i"`)
	b.WriteString(o.names[0])
	b.WriteString(`"`)
}

// text is the operand as cel.AstToString writes it: its source.
func (o quickOperand) text() string { return o.src }
