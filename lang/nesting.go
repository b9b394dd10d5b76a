package lang

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// MaxNesting is how deeply a workflow file may nest (language.md §15):
// every bracket, brace and parenthesis that is open, every string or
// heredoc inside a ${ } or %{ } sequence, and every unary operator (-, !)
// or conditional (?) inside one list item or attribute counts a level.
// hclsyntax parses by recursion, one or more Go frames a level, so a file
// nested without bound would exhaust the stack (a fatal error, not a
// panic) or the memory before any diagnostic; the file is measured first.
const MaxNesting = 1000

// MaxItems is how many items a workflow file may hold (language.md §15):
// every block, object, list or parenthesis opened, every attribute or
// object item (= or :), every list or argument separator (,), every
// operator, and every {{
// in a string or heredoc (a template expression). Each becomes a syntax
// node, a value and often a CEL program, about a kilobyte or more held
// while the file is compiled, so the count, not the file's size, bounds
// what loading it takes; the file is measured first, before anything is
// parsed. A chain of 20,000 steps holds 100,000.
const MaxItems = 110000

// checkShape reports the first place where src nests deeper than
// MaxNesting or holds more than MaxItems items, or nil. It reads the bytes once, without allocating per
// byte, and follows HCL's lexical structure well enough to skip strings,
// heredocs and comments; where it is unsure (a file with syntax errors)
// it errs on counting, and hclsyntax reports the real mistake of any file
// that stays under the limit.
func checkShape(filename string, src []byte) *hcl.Diagnostic {
	off, tooMany := measure(src, MaxNesting, MaxItems)
	if off < 0 {
		return nil
	}
	start := posAt(src, off)
	end := start
	_, size := utf8.DecodeRune(src[off:])
	end.Byte += max(size, 1)
	end.Column++
	d := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Nesting too deep",
		Detail: fmt.Sprintf("This is nested more than %d levels deep (open brackets, braces and parentheses, "+
			"and operators inside one value, each count a level). flowrun reads no deeper nesting; "+
			"flatten the value.", MaxNesting),
		Subject: &hcl.Range{Filename: filename, Start: start, End: end},
	}
	if tooMany {
		d.Summary = "Too many items in one file"
		d.Detail = fmt.Sprintf("This file holds more than %d items (blocks, attributes, list items, operators and {{ }} expressions); "+
			"this is the first past the limit. flowrun reads no more of one file: split the workflows into several files, "+
			"or compute long lists at run time instead of writing them out.", MaxItems)
	}
	return d
}

// posAt is the position of byte offset off in src (columns count
// characters from 1).
func posAt(src []byte, off int) hcl.Pos {
	pos := hcl.Pos{Line: 1, Column: 1}
	for i := 0; i < off && i < len(src); i++ {
		switch {
		case src[i] == '\n':
			pos.Line++
			pos.Column = 1
		case src[i]&0xC0 != 0x80: // not a UTF-8 continuation byte
			pos.Column++
		}
	}
	pos.Byte = off
	return pos
}

// nestFrame is one open level of the scan.
type nestFrame struct {
	kind   byte // 'e' code (opened by closer's partner, or ${ / %{), '"' quoted string, 'h' heredoc
	closer byte // 'e': the byte that closes it; '}' for a ${ or %{ sequence
	ops    int  // 'e': unary operators and conditionals in the current item
	marker []byte
}

// nestingOverflow returns the offset of the byte at which src first nests
// deeper than limit, or -1.
func nestingOverflow(src []byte, limit int) int {
	off, _ := measure(src, limit, math.MaxInt)
	return off
}

// measure returns the offset of the byte at which src first nests deeper
// than limit or holds more than maxItems items (tooMany), or -1.
func measure(src []byte, limit, maxItems int) (off int, tooMany bool) {
	items := 0
	count := func() bool {
		items++
		return items > maxItems
	}
	stack := []nestFrame{{kind: 'e'}} // the file's body, never popped
	depth := 0                        // len(stack)-1 + the ops of every frame
	push := func(f nestFrame) bool {
		stack = append(stack, f)
		depth++
		return depth > limit
	}
	pop := func() {
		top := stack[len(stack)-1]
		depth -= 1 + top.ops
		stack = stack[:len(stack)-1]
	}
	resetOps := func() {
		top := &stack[len(stack)-1]
		depth -= top.ops
		top.ops = 0
	}
	n := len(src)
	for i := 0; i < n; {
		top := &stack[len(stack)-1]
		c := src[i]
		switch top.kind {
		case '"':
			switch {
			case c == '\\':
				i += 2
			case c == '"':
				pop()
				i++
			case c == '\n':
				pop() // an unterminated string; hclsyntax reports it
			case c == '{' && i+1 < n && src[i+1] == '{':
				if count() {
					return i, true
				}
				i += 2
			case (c == '$' || c == '%') && i+2 < n && src[i+1] == c && src[i+2] == '{':
				i += 3 // $${ and %%{ are literal text
			case (c == '$' || c == '%') && i+1 < n && src[i+1] == '{':
				if push(nestFrame{kind: 'e', closer: '}'}) {
					return i, false
				}
				i += 2
			default:
				i++
			}
			continue
		case 'h':
			if i == 0 || src[i-1] == '\n' {
				if end, ok := heredocEnd(src[i:], top.marker); ok {
					pop()
					i += end
					continue
				}
			}
			switch {
			case c == '{' && i+1 < n && src[i+1] == '{':
				if count() {
					return i, true
				}
				i += 2
			case (c == '$' || c == '%') && i+2 < n && src[i+1] == c && src[i+2] == '{':
				i += 3
			case (c == '$' || c == '%') && i+1 < n && src[i+1] == '{':
				if push(nestFrame{kind: 'e', closer: '}'}) {
					return i, false
				}
				i += 2
			default:
				i++
			}
			continue
		}
		// Code.
		switch c {
		case '#':
			i = skipLine(src, i)
			continue
		case '/':
			if i+1 < n && src[i+1] == '/' {
				i = skipLine(src, i)
				continue
			}
			if i+1 < n && src[i+1] == '*' {
				i += 2
				for i < n && !(src[i] == '*' && i+1 < n && src[i+1] == '/') {
					i++
				}
				i += 2
				continue
			}
			if count() { // division
				return i, true
			}
		case '"':
			if push(nestFrame{kind: '"'}) {
				return i, false
			}
		case '<':
			if marker, body, ok := heredocStart(src[i:]); ok {
				if push(nestFrame{kind: 'h', marker: marker}) {
					return i, false
				}
				i += body
				continue
			}
			if count() {
				return i, true
			}
		case '+', '*', '%', '>', '&', '|':
			if count() {
				return i, true
			}
		case '{', '[', '(':
			if count() {
				return i, true
			}
			closer := byte('}')
			switch c {
			case '[':
				closer = ']'
			case '(':
				closer = ')'
			}
			if push(nestFrame{kind: 'e', closer: closer}) {
				return i, false
			}
		case '}', ']', ')':
			if len(stack) > 1 {
				pop() // a mismatched closer is hclsyntax's to report
			}
		case '-', '!', '?':
			if c == '-' && i > 0 && identByte(src[i-1]) {
				break // inside a name (X-Api-Key) or a number (1e-5)
			}
			if count() {
				return i, true
			}
			top.ops++
			depth++
			if depth > limit {
				return i, false
			}
		case '=', ':':
			if count() {
				return i, true
			}
		case ',':
			if count() {
				return i, true
			}
			resetOps()
		case '\n':
			if top.closer != ']' && top.closer != ')' {
				resetOps() // a newline ends an attribute or an object item
			}
		}
		i++
	}
	return -1, false
}

func identByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

// skipLine returns the offset of the newline that ends the line holding
// src[i], or len(src).
func skipLine(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}

// heredocStart recognizes <<MARKER or <<-MARKER followed by a newline at
// the start of src, returning the marker and the length up to and
// including that newline.
func heredocStart(src []byte) (marker []byte, n int, ok bool) {
	if len(src) < 3 || src[0] != '<' || src[1] != '<' {
		return nil, 0, false
	}
	i := 2
	if src[i] == '-' {
		i++
	}
	start := i
	for i < len(src) && (identByte(src[i]) || src[i] == '-' && i > start) {
		i++
	}
	if i == start {
		return nil, 0, false
	}
	marker = src[start:i]
	if i < len(src) && src[i] == '\r' {
		i++
	}
	if i >= len(src) || src[i] != '\n' {
		return nil, 0, false
	}
	return marker, i + 1, true
}

// heredocEnd reports whether the line at the start of src closes a heredoc
// with marker (blanks, the marker, then the end of the line), and the
// length up to the end of the marker.
func heredocEnd(src, marker []byte) (int, bool) {
	i := 0
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if len(src)-i < len(marker) || string(src[i:i+len(marker)]) != string(marker) {
		return 0, false
	}
	j := i + len(marker)
	if j < len(src) && src[j] == '\r' {
		j++
	}
	if j < len(src) && src[j] != '\n' {
		return 0, false
	}
	return i + len(marker), true
}
