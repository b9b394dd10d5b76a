package graph

import "bytes"

// MayHaveTypedWait reports whether the stored graph raw (as Encode writes
// it) may hold a wait step that declares a type for its signal's data. It
// scans the bytes without decoding them, so that sending a signal to a
// long run whose waits declare no type does not decode its graph. A wait
// is encoded {"signal":"NAME"[,"timeout_ms":N][,"type":...]} and a signal
// name holds no quote or backslash; a wait written any other way counts as
// typed, so the answer is false only when no wait is.
func MayHaveTypedWait(raw []byte) bool {
	key := []byte(`"wait":{`)
	for rest := raw; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return false
		}
		rest = rest[i+len(key):]
		p, ok := bytes.CutPrefix(rest, []byte(`"signal":"`))
		if !ok {
			return true
		}
		end := bytes.IndexAny(p, `"\`)
		if end < 0 || p[end] != '"' {
			return true
		}
		p = p[end+1:]
		if q, ok := bytes.CutPrefix(p, []byte(`,"timeout_ms":`)); ok {
			n := 0
			for n < len(q) && q[n] >= '0' && q[n] <= '9' {
				n++
			}
			p = q[n:]
		}
		switch {
		case bytes.HasPrefix(p, []byte(`}`)):
			// untyped
		default:
			return true // ,"type": or anything unexpected
		}
	}
}
