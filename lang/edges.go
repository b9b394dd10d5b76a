package lang

import (
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// stepEdge is one edge of the step graph as the compiler keeps it: the
// step waited for, and the range of the first reference that makes the
// step wait for it. A step's edges are a short slice rather than a map:
// a map per step was most of what a long chain held while it compiled.
type stepEdge struct {
	to  string
	rng hcl.Range
}

// sortEdges puts every step's edges in name order and keeps, of the edges
// to one step, the first recorded (the first reference in the order
// collectEdges reads them), as a map that keeps its first entry would.
func (c *compiler) sortEdges() {
	for name, es := range c.edges {
		sort.SliceStable(es, func(i, j int) bool { return es[i].to < es[j].to })
		out := es[:0]
		for _, e := range es {
			if len(out) > 0 && out[len(out)-1].to == e.to {
				continue
			}
			out = append(out, e)
		}
		if len(out) < cap(es) {
			// Held until the step is built: no room to spare.
			out = slices.Clone(out)
		}
		c.edges[name] = out
	}
}

// edgeRange is the range of the reference that makes step a wait for b.
func (c *compiler) edgeRange(a, b string) hcl.Range {
	es := c.edges[a]
	i := sort.Search(len(es), func(i int) bool { return es[i].to >= b })
	if i < len(es) && es[i].to == b {
		return es[i].rng
	}
	return hcl.Range{}
}

// edgeNames lists the names of edges in their order (sorted).
func edgeNames(es []stepEdge) []string {
	if len(es) == 0 {
		return []string{}
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.to
	}
	return out
}
