// Package termtext makes text that flowrun did not write itself (a program's
// stdout and stderr, an http body, an input, a run key, an error message that
// quotes any of them) safe to print on a terminal. A control character in
// such text could move the cursor, erase a line, retitle the window or
// reorder what is shown, and make a failed step read "all good"; here each
// one is replaced by a visible escape, so what a person reads is what is
// stored.
//
// The escapes (spec/semantics.md, "Terminal output"):
//
//	\a \b \t \n \v \f \r   those seven C0 controls, as in Go and C
//	\x00 … \x1f, \x7f      every other C0 control (ESC is \x1b) and DEL
//	\u0080 … \u009f        the C1 controls (U+0080 to U+009F)
//	\u061c \u200e \u200f   the bidirectional controls (Trojan Source),
//	\u202a … \u202e        as Unicode's Bidi_Control property lists them,
//	\u2066 … \u2069        and the line and paragraph separators
//	\u2028 \u2029          U+2028 and U+2029
//	\xHH                   each byte that is not part of valid UTF-8
//
// Everything else, backslashes included, is kept as it is: the escaped form
// is for reading, not for decoding back. The exact text is what --json
// prints.
//
// JSON output (--json) needs no escaping of that kind to be exact, but it
// reaches terminals too: encoding/json writes the C0 controls as \u00XX, yet
// leaves DEL and the C1 and bidirectional controls raw. JSON rewrites them as \uXXXX
// escapes, which keeps every decoded value exactly as it was.
//
// Line and Lines must not be used on anything that is stored or printed as
// JSON: they change the text. termtext reads no terminal state and applies
// no styles.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s for a one-line place (a table cell, a log line, a status
// bar, a title): every control character, \n and \t included, is escaped.
func Line(s string) string { return escape(s, false) }

// Lines returns s for a multi-line place (a program's output shown as a
// block of lines): as Line, but \n is kept, so the text keeps its lines.
// A tab is escaped as in Line: a view lays text out in cells, and how wide
// a tab is depends on the column the terminal is at.
func Lines(s string) string { return escape(s, true) }

// JSON returns the JSON text b with every DEL, C1 control, bidirectional
// control and line or paragraph separator written as a \uXXXX escape (the
// C0 controls are escaped already, as JSON requires). Such a rune is never
// part of JSON's syntax, so it can only stand inside a
// string, where the escape decodes to the same rune: the JSON's value does
// not change. Everything else, invalid UTF-8 included (encoding/json never
// writes it), is kept. b is returned as it is when there is nothing to
// escape.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf && b[i] != 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	var out []byte
	start := 0 // b[start:i] is not copied yet
	for i < len(b) {
		if b[i] < utf8.RuneSelf && b[i] != 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || size > 1 && unsafeRune(r) {
			if out == nil {
				out = make([]byte, 0, len(b)+16)
			}
			out = append(out, b[start:i]...)
			out = appendHex(out, `\u`, uint32(r), 4)
			start = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[start:]...)
}

// escape is Line and Lines: keepNewline keeps \n.
func escape(s string, keepNewline bool) string {
	// Most text is plain ASCII and needs nothing.
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x80 || c == 0x7f || c < 0x20 && !(keepNewline && c == '\n') {
			break
		}
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case keepNewline && c == '\n':
				b.WriteByte(c)
			case c < 0x20 || c == 0x7f:
				writeByteEscape(&b, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(c), 2)
		case unsafeRune(r):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether a non-ASCII rune must be escaped: a C1
// control, a bidirectional control, or a line or paragraph separator.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// writeByteEscape writes the escape of a C0 control or DEL.
func writeByteEscape(b *strings.Builder, c byte) {
	switch c {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\v':
		b.WriteString(`\v`)
	case '\f':
		b.WriteString(`\f`)
	case '\r':
		b.WriteString(`\r`)
	default:
		writeHex(b, `\x`, uint32(c), 2)
	}
}

// writeHex writes prefix and v in lower-case hex, zero-padded to digits.
func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	var buf [8]byte
	b.Write(appendHex(buf[:0], prefix, v, digits))
}

// appendHex appends prefix and v in lower-case hex, zero-padded to digits.
func appendHex(dst []byte, prefix string, v uint32, digits int) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, prefix...)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hex[v>>uint(shift)&0xf])
	}
	return dst
}
