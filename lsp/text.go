package lsp

import (
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// text is a document's content with its line starts, for converting
// between byte offsets and protocol positions (UTF-16 code units).
type text struct {
	src   []byte
	lines []int // byte offset of each line's start
}

func newText(src []byte) *text {
	t := &text{src: src, lines: []int{0}}
	for i, c := range src {
		if c == '\n' {
			t.lines = append(t.lines, i+1)
		}
	}
	return t
}

// offset returns the byte offset of p, clamped to the document: a line
// past the end is the end, a character past the line's end is the line's
// end.
func (t *text) offset(p Position) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(t.lines) {
		return len(t.src)
	}
	off := t.lines[p.Line]
	end := len(t.src)
	if p.Line+1 < len(t.lines) {
		end = t.lines[p.Line+1] - 1 // the newline
	}
	units := 0
	for off < end && units < p.Character {
		r, size := utf8.DecodeRune(t.src[off:end])
		n := 1
		if r >= 0x10000 && r != utf8.RuneError {
			n = 2
		}
		if units+n > p.Character {
			break
		}
		units += n
		off += size
	}
	return off
}

// position returns the protocol position of byte offset off.
func (t *text) position(off int) Position {
	off = max(0, min(off, len(t.src)))
	line := sort.Search(len(t.lines), func(i int) bool { return t.lines[i] > off }) - 1
	line = max(line, 0)
	units := 0
	for i := t.lines[line]; i < off; {
		r, size := utf8.DecodeRune(t.src[i:off])
		if r >= 0x10000 && r != utf8.RuneError {
			units += len(utf16.Encode([]rune{r}))
		} else {
			units++
		}
		i += size
	}
	return Position{Line: line, Character: units}
}

// rangeOf is the protocol range of the byte span [start, end).
func (t *text) rangeOf(start, end int) Range {
	if end < start {
		end = start
	}
	return Range{Start: t.position(start), End: t.position(end)}
}
