package expr

// scanStepRefs finds the steps a stored CEL expression reads without
// parsing it: the NAME of every steps.NAME outside string literals and
// comments, in source order, with duplicates, appended to refs.
//
// The scan may report more names than the expression reads (a
// comprehension variable called steps), never fewer: ok is false when the
// text uses steps in a way the scan cannot follow (steps[...], steps.?x,
// (steps).x, steps.f(), an escaped field name, an unterminated literal),
// and the caller must then parse the expression.
func scanStepRefs(src string, refs []string) ([]string, bool) {
	afterDot := false // the last token was a '.'
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = skipComment(src, i)
			continue
		case c == '\'' || c == '"':
			end := skipString(src, i, false)
			if end < 0 {
				return nil, false
			}
			i = end
		case c == '`':
			end := indexFrom(src, i+1, '`')
			if end < 0 {
				return nil, false
			}
			i = end + 1
		case c == '.' && !(i+1 < len(src) && isDigit(src[i+1])):
			i++
			afterDot = true
			continue
		case isDigit(c) || c == '.':
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '.') {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(src) && isIdentPart(src[i]) {
				i++
			}
			word := src[start:i]
			if i < len(src) && (src[i] == '\'' || src[i] == '"') && isStringPrefix(word) {
				end := skipString(src, i, hasRaw(word))
				if end < 0 {
					return nil, false
				}
				i = end
				break
			}
			if word != "steps" || afterDot {
				break
			}
			j := skipBlank(src, i)
			if j >= len(src) || src[j] != '.' {
				return nil, false
			}
			j = skipBlank(src, j+1)
			if j >= len(src) || !isIdentStart(src[j]) {
				return nil, false
			}
			k := j
			for k < len(src) && isIdentPart(src[k]) {
				k++
			}
			if n := skipBlank(src, k); n < len(src) && src[n] == '(' {
				return nil, false
			}
			refs = append(refs, src[j:k])
			i = k
		default:
			i++
		}
		afterDot = false
	}
	return refs, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// isStringPrefix reports whether word may prefix a string literal: r, b,
// rb or br in either case.
func isStringPrefix(word string) bool {
	switch len(word) {
	case 1:
		return hasRaw(word) || word == "b" || word == "B"
	case 2:
		return hasRaw(word) && (word[0] == 'b' || word[0] == 'B' || word[1] == 'b' || word[1] == 'B')
	}
	return false
}

func hasRaw(word string) bool {
	for i := 0; i < len(word); i++ {
		if word[i] == 'r' || word[i] == 'R' {
			return true
		}
	}
	return false
}

// skipString returns the index after the string literal whose opening
// quote is at i, or -1 when it is not closed.
func skipString(src string, i int, raw bool) int {
	q := src[i : i+1]
	if len(src) >= i+3 && src[i+1] == src[i] && src[i+2] == src[i] {
		q = src[i : i+3]
	}
	for j := i + len(q); j < len(src); j++ {
		if src[j] == '\\' && !raw {
			j++
			continue
		}
		if len(src)-j >= len(q) && src[j:j+len(q)] == q {
			return j + len(q)
		}
	}
	return -1
}

// skipComment returns the index after the // comment at i.
func skipComment(src string, i int) int {
	if end := indexFrom(src, i, '\n'); end >= 0 {
		return end + 1
	}
	return len(src)
}

// skipBlank skips spaces and comments from i.
func skipBlank(src string, i int) int {
	for i < len(src) {
		switch {
		case isSpace(src[i]):
			i++
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
			i = skipComment(src, i)
		default:
			return i
		}
	}
	return i
}

func indexFrom(s string, i int, c byte) int {
	for j := i; j < len(s); j++ {
		if s[j] == c {
			return j
		}
	}
	return -1
}
