package interp

import (
	"fmt"
	"sort"

	"github.com/flowrun/flowrun/lang/graph"
)

// setOutputError checks a set step's output against the bounds every
// stored value obeys (language.md §8.5, §15): each attribute's value nests
// at most lang.MaxValueDepth levels, and the output's JSON is at most
// limits.output_bytes, as one captured stream of exec or http is. A set
// value cannot be cut the way text is, so going over either fails the step
// with kind output_limit (never retried: the same inputs give the same
// value). nil when the output is within both.
func (sc *scheduler) setOutputError(out map[string]any) *stepError {
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if graph.ValueTooDeep(out[name], graph.MaxValueDepth) {
			return &stepError{Kind: "output_limit", Message: fmt.Sprintf(
				"set value %q nests deeper than %d levels of lists and objects, the most a stored value may; flatten it",
				name, graph.MaxValueDepth)}
		}
	}
	limit := sc.l.g.Limits.OutputBytes
	if limit <= 0 {
		limit = graph.DefaultOutputBytes
	}
	if n := int64(len(mustJSON(normalizeJSON(out)))); n > limit {
		return &stepError{Kind: "output_limit", Message: fmt.Sprintf(
			"the set output is %d bytes as JSON, over limits.output_bytes (%d); store less, or raise limits.output_bytes",
			n, limit)}
	}
	return nil
}
