package interp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// StrictJSONError is JSON that encoding/json would accept but change.
type StrictJSONError struct {
	// Offset is the byte (from 0) where the problem starts; Key the key
	// given twice ("" for a lone surrogate).
	Offset int64
	Key    string
	Msg    string
}

func (e *StrictJSONError) Error() string { return e.Msg }

// StrictJSON refuses (*StrictJSONError) what encoding/json would accept
// but change: a string with a lone UTF-16 surrogate escape (\ud800 alone
// becomes U+FFFD unseen), and an object with a key twice (the last one
// would win silently). Invalid JSON is left to the decoder to report.
func StrictJSON(b []byte) error {
	if off := loneSurrogateAt(b); off >= 0 {
		return &StrictJSONError{Offset: int64(off), Msg: fmt.Sprintf("it has a lone UTF-16 surrogate escape (at byte %d); a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one", off+1)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // an object's next string is a key
	}
	var stack []*frame
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // not valid JSON: the decoder says so with its offset
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					if q := bytes.IndexByte(b[off:], '"'); q >= 0 {
						off += int64(q) // the key's opening quote
					}
					return &StrictJSONError{Offset: off, Key: k,
						Msg: fmt.Sprintf("it has the key %s twice in one object (the second at byte %d); give each key once", strconv.Quote(k), off+1)}
				}
				top.keys[k] = true
				top.expect = false
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, expect: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		// A value ended: an object's next string is a key again.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}

// loneSurrogateAt is the offset of the first \u escape of a UTF-16
// surrogate that is not half of a pair, or -1.
func loneSurrogateAt(b []byte) int {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b, i+2)
				switch {
				case ok && r >= 0xD800 && r <= 0xDBFF:
					if lo, ok2 := escapeAt(b, i+6); ok2 && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
					return i
				case ok && r >= 0xDC00 && r <= 0xDFFF:
					return i
				}
				i += 5
				continue
			}
			i++ // the escaped character
		}
	}
	return -1
}

// escapeAt reads a \uXXXX escape at b[i:].
func escapeAt(b []byte, i int) (rune, bool) {
	if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	return hex4(b, i+2)
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}
