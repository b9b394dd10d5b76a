package expr

import (
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// TestCostNamesTheCause: lists.range over an input number is accepted (its
// list holds at most MaxEstimatedElements, like any list); the cost
// diagnostic says "nesting" only when comprehensions are nested, and names
// the costly call otherwise.
func TestCostNamesTheCause(t *testing.T) {
	t.Parallel()
	sc := &Scope{Inputs: graph.ObjectOf(map[string]*graph.Type{
		"shards": graph.TypeNumber, "tags": graph.ListOf(graph.TypeString), "s": graph.TypeString,
	})}
	for _, src := range []string{
		"lists.range(int(input.shards))",
		"lists.range(int(input.shards)).map(i, 'shard-' + string(i))",
		"lists.range(3).map(i, input.tags.map(t, t + string(i)))",
	} {
		if _, diags := ctCheck(src, sc, nil); diags.HasErrors() {
			t.Errorf("%s: refused: %s", src, diags)
		}
	}
	cases := []struct{ src, want, not string }{
		{"lists.range(int(input.shards)).map(i, lists.range(int(input.shards)).map(j, i * j))", "Avoid nesting comprehensions", "It nests no"},
		{"input.tags.sort()", "the cost comes from sort()", "Avoid nesting"},
		{"input.tags.distinct().join(',')", "the cost comes from distinct() and join()", "Avoid nesting"},
	}
	for _, c := range cases {
		_, diags := ctCheck(c.src, sc, nil)
		if !diags.HasErrors() || diags[0].Summary != "Expression too expensive" {
			t.Errorf("%s: %s, want Expression too expensive", c.src, diags)
			continue
		}
		if d := diags[0].Detail; !strings.Contains(d, c.want) || strings.Contains(d, c.not) {
			t.Errorf("%s: detail %q, want %q and not %q", c.src, d, c.want, c.not)
		}
	}
}
