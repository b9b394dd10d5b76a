package graph_test

import (
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// storedGraph compiles testsrc.Chain(n) and returns its graph as stored:
// through JSON, so that what reads it sees fresh pointers and types.
func storedGraph(tb testing.TB, n int) *graph.Graph {
	tb.Helper()
	m, diags := lang.LoadFile("big.hcl", testsrc.Chain(n))
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	return testsrc.Stored(tb, m.Workflows[0].Graph)
}
