package interp

import (
	"bytes"

	"github.com/flowrun/flowrun/lang/graph"
)

// parseOutputJSON parses what a program printed on stdout, or an http
// response body, as the JSON value of exec's `json` and http's `body`
// (language.md §8.3, §8.4). ok is false when the text, surrounding white
// space aside, is empty, is not one JSON value, or nests deeper than
// lang.MaxValueDepth: such output is kept as text only. The depth is
// measured on the bytes before decoding, so a deep document costs no
// more than reading it once.
func parseOutputJSON(b []byte) (v any, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || graph.JSONDepthOver(b, graph.MaxValueDepth) >= 0 {
		return nil, false
	}
	if err := graph.UnmarshalJSON(b, &v); err != nil {
		return nil, false
	}
	return v, true
}
