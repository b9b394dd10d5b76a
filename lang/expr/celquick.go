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

// quickOperand is a reference a.b.c (ref) or a whole number (num); src
// is its text.
type quickOperand struct {
	src string
	ref bool
	num int64
}

// names splits a reference into its names (at most quickNames of them,
// as quickReadOperand took it) in an array the caller keeps.
func (o quickOperand) names(out *[quickNames]string) []string {
	n, rest := 0, o.src
	for {
		i := strings.IndexByte(rest, '.')
		if i < 0 {
			out[n] = rest
			return out[:n+1]
		}
		out[n], rest = rest[:i], rest[i+1:]
		n++
	}
}

// quickNames is the most names a reference quickExpr reads may have.
const quickNames = 8

// quickParsed is what quickExpr returns, allocated at once.
type quickParsed struct {
	pe    ParsedExpr
	sh    exprShape
	refs  [2]varRef
	steps [2]string
}

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
	q := &quickParsed{pe: ParsedExpr{src: src, loc: loc}}
	p, sh := &q.pe, &q.sh
	var id int64
	refs := lhs.appendRefs(q.refs[:0], &id)
	steps := q.steps[:0]
	var b strings.Builder
	b.Grow(2*len(src) + 16)
	if op == "" {
		steps = lhs.writeShape(&b, steps)
		sh.text = lhs.src
	} else {
		id++ // the operator's
		refs = rhs.appendRefs(refs, &id)
		b.WriteString(`c"`)
		b.WriteString(fn)
		b.WriteString(`"2`)
		steps = lhs.writeShape(&b, steps)
		steps = rhs.writeShape(&b, steps)
		// The canonical text is the source's when the source is written
		// that way.
		if t := src[start:end]; len(t) == len(lhs.src)+len(op)+len(rhs.src)+2 && t[len(lhs.src)] == ' ' && t[len(t)-len(rhs.src)-1] == ' ' {
			sh.text = t
		} else {
			sh.text = lhs.src + " " + op + " " + rhs.src
		}
	}
	// The parser's path leaves both nil when empty.
	if len(refs) > 0 {
		p.refs = refs
	}
	if len(steps) > 0 {
		sh.steps = steps
	}
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

// quickReadOperand reads an operand at src[i]: a reference of at most
// quickNames names joined by dots with nothing between them, or a decimal
// number without a leading zero that fits an int64. It returns the index
// after it.
func quickReadOperand(src string, i int) (quickOperand, int, bool) {
	start := i
	if i < len(src) && src[i] >= '0' && src[i] <= '9' {
		j := i
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		if j < len(src) && (isCELNameByte(src[j]) || src[j] == '.') || (src[i] == '0' && j-i > 1) || j-i > 18 {
			return quickOperand{}, i, false
		}
		n, err := strconv.ParseInt(src[i:j], 10, 64)
		return quickOperand{src: src[i:j], num: n}, j, err == nil
	}
	for k := 1; ; k++ {
		j := i
		if j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
			for j < len(src) && isCELNameByte(src[j]) {
				j++
			}
		}
		name := src[i:j]
		if name == "" || celReserved[name] || k > quickNames {
			return quickOperand{}, i, false
		}
		if j == len(src) || src[j] != '.' {
			return quickOperand{src: src[start:j], ref: true}, j, true
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
	if !o.ref {
		*id++
		return refs
	}
	var buf [quickNames]string
	names := o.names(&buf)
	first := *id + 1
	*id += int64(len(names))
	if !flowVars[names[0]] {
		return refs
	}
	if len(names) == 1 {
		return append(refs, varRef{name: names[0], id: first, ident: first})
	}
	return append(refs, varRef{name: names[0], field: names[1], id: first + 1, ident: first})
}

// writeShape writes the operand as writeShape writes its tree (names
// need no escaping in strconv.Quote's quotes), and appends the name of the
// step it selects to steps.
func (o quickOperand) writeShape(b *strings.Builder, steps []string) []string {
	if !o.ref {
		b.WriteString("li")
		b.WriteString(o.src)
		b.WriteString(";")
		return steps
	}
	var buf [quickNames]string
	names := o.names(&buf)
	for k := len(names) - 1; k >= 1; k-- {
		if k == 1 && names[0] == "steps" {
			b.WriteString("Ss")
			return append(steps, names[1])
		}
		b.WriteString(`s"`)
		b.WriteString(names[k])
		b.WriteString(`"`)
	}
	b.WriteString(`i"`)
	b.WriteString(names[0])
	b.WriteString(`"`)
	return steps
}
