package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

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

// TypedWait is a wait step that declares a type for its signal's data:
// the step's name and the type.
type TypedWait struct {
	Step string `json:"step"`
	Type *Type  `json:"type"`
}

// SignalTypes returns the JSON object of g's typed waits: each signal
// name that a top-level wait step declaring a type takes, with those
// steps in the order of g.Steps ({} when no wait declares one). It is
// stored beside the graph, so that sending a signal checks its data
// without reading the graph (DecodeSignalTypes reads it back).
func SignalTypes(g *Graph) []byte {
	waits := map[string][]TypedWait{}
	for _, s := range g.Steps {
		w := s.Action.Wait
		if s.Action.Kind != KindWait || w == nil || w.Type == nil {
			continue
		}
		waits[w.Signal] = append(waits[w.Signal], TypedWait{Step: s.Name, Type: w.Type})
	}
	names := make([]string, 0, len(waits))
	for name := range waits {
		names = append(names, name)
	}
	slices.Sort(names)
	b := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(encAppendString(b, name), `:[`...)
		for j, tw := range waits[name] {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(encAppendString(append(b, `{"step":`...), tw.Step), `,"type":`...)
			b = append(tw.Type.appendJSON(b), '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// DecodeSignalTypes reads back what SignalTypes wrote: the typed waits of
// each signal name, in graph order.
func DecodeSignalTypes(raw []byte) (map[string][]TypedWait, error) {
	var waits map[string][]TypedWait
	if err := json.Unmarshal(raw, &waits); err != nil {
		return nil, fmt.Errorf("decode the signal types of a graph: %w", err)
	}
	for name, ws := range waits {
		for _, tw := range ws {
			if tw.Type == nil || tw.Type.Kind == "" {
				return nil, fmt.Errorf("decode the signal types of a graph: signal %q, step %q: no type", name, tw.Step)
			}
		}
	}
	return waits, nil
}
