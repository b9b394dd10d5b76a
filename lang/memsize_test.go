package lang

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// heapInUse is the heap's live bytes after a collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// heldPerStep is what drop releases, in live heap bytes per step of an
// n-step workflow; keep is kept alive across the measurement (what holds
// the rest, so that only what drop let go is counted).
func heldPerStep(n int, drop func(), keep ...any) float64 {
	with := heapInUse()
	drop()
	without := heapInUse()
	runtime.KeepAlive(keep)
	return float64(int64(with)-int64(without)) / float64(n)
}

// A workflow's source map is kept as long as its Module: it holds seven
// ranges per step of testsrc.Chain (the step and its set block, each with
// its label, the when and the set's two values). Kept as maps of
// hcl.Range it held over a kilobyte per step; packed, under 600 bytes.
func TestSourceMapSizePerStep(t *testing.T) {
	const n = 4000
	m, diags := LoadFile("big.hcl", testsrc.Chain(n))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	w := m.Workflows[0]
	if got := w.Sources.Attr("step.s17.set.label"); got.Start.Line == 0 {
		t.Fatalf("no range for step.s17.set.label")
	}
	per := heldPerStep(n, func() { w.Sources = nil }, m)
	t.Logf("source map: %.0f bytes per step", per)
	if per > 600 {
		t.Errorf("the source map holds %.0f bytes per step, want at most 600", per)
	}
}

// The compiler keeps, for each step, the steps it waits for while it
// orders and builds them: a map per step held over 600 bytes for a chain's
// one edge per step; a slice, under 250.
func TestCollectEdgesHeldPerStep(t *testing.T) {
	const n = 4000
	c := chainCompiler(t, n)
	if got := edgeNames(c.edges["s9"]); len(got) != 1 || got[0] != "s8" {
		t.Errorf("edges of s9: %v", got)
	}
	per := heldPerStep(n, func() { c.edges = nil }, c)
	t.Logf("collectEdges: %.0f bytes held per step", per)
	if per > 250 {
		t.Errorf("the edges hold %.0f bytes per step, want at most 250", per)
	}
}

// A long workflow's step declarations are all held between decoding and
// building (the steps are built in dependency order). A set action held
// about 700 bytes besides its values when every action carried the fields
// of every kind and its values were a map; it now shares one zero block of
// the other kinds' fields and keeps its values in a slice sorted by name.
func TestDecodedStepSizePerStep(t *testing.T) {
	const n = 4000
	file, diags := parseConfig(testsrc.Chain(n), "big.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	decls, diags := decodeFile(file)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	file = nil
	w := decls[0]
	if a := w.Steps[9].Action; a.Kind != "set" || len(a.Values) != 2 || a.Values[0].Name != "label" || a.Values[1].Name != "n" {
		t.Fatalf("step s9's action: %+v", a)
	}
	// The actions alone, without the data nodes they hold.
	nodes := make([][]*dataNode, n)
	for i, s := range w.Steps {
		nodes[i] = s.Action.dataNodes()
	}
	per := heldPerStep(n, func() {
		for _, s := range w.Steps {
			s.Action = nil
		}
	}, w, nodes)
	t.Logf("set actions: %.0f bytes per step", per)
	if per > 250 {
		t.Errorf("a set action holds %.0f bytes besides its values, want at most 250", per)
	}
	if !reflect.DeepEqual(*noActionMore, actionMore{}) {
		t.Errorf("decoding wrote into the set actions' shared fields: %+v", *noActionMore)
	}
}

// The set steps of a chain have equal output types, held once: a long
// workflow's graph kept a type (and its map of fields) per step.
func TestCompiledStepsShareOutputTypes(t *testing.T) {
	m, diags := LoadFile("big.hcl", testsrc.Chain(50))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := m.Workflows[0].Graph
	first := g.Steps[1].OutputType
	for _, s := range g.Steps[2:] {
		if s.OutputType != first {
			t.Fatalf("step %s's output type %s is another value than s1's %s", s.Name, s.OutputType, first)
		}
	}
	if g.Steps[0].OutputType == first {
		t.Error("s0 (set { n = 0 }) shares the type of the steps that also set label")
	}
}

// Parsing a long file with its steps decoded piece by piece holds, besides
// the steps' declarations, the block headers with their bodies emptied:
// not the syntax tree, which decoding after the parse held (partly) along
// with the declarations.
func TestParseDecodingHoldsNoTree(t *testing.T) {
	saved := parallelParseMin
	defer func() { parallelParseMin = saved }()
	parallelParseMin = 0
	const n = 4000
	src := testsrc.Chain(n)
	base := heapInUse()
	file, diags := parseConfig(src, "big.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tree := heapInUse() - base
	runtime.KeepAlive(file)
	file = nil
	base = heapInUse()
	file, pre, diags := parseConfigDecoding(src, "big.hcl", true)
	if diags.HasErrors() || pre == nil {
		t.Fatal(diags)
	}
	pre = nil
	rest := heapInUse() - base
	runtime.KeepAlive(file)
	t.Logf("the syntax tree holds %d bytes per step; with the steps decoded, the parse %d besides them", tree/n, rest/n)
	if rest > tree/3 {
		t.Errorf("parsing with the steps decoded holds %d bytes besides them, the syntax tree %d", rest, tree)
	}
}

// TestOrderAllocs: ordering a chain allocates its index, arrays and list
// once at their size, not a list of users per step and a boxed name per
// step pushed on the heap.
func TestOrderAllocs(t *testing.T) {
	const n = 4000
	c := chainCompiler(t, n)
	var order []*stepDecl
	allocs := testing.AllocsPerRun(5, func() { order = c.order() })
	if len(order) != n || order[0].Name != "s0" || order[n-1].Name != "s3999" {
		t.Fatalf("order: %d steps", len(order))
	}
	t.Logf("order: %.0f allocations for %d steps", allocs, n)
	if allocs > 50 {
		t.Errorf("ordering %d steps allocates %.0f times, want at most 50", n, allocs)
	}
}

// chainCompiler is the compiler of testsrc.Chain(n), its edges collected.
func chainCompiler(t *testing.T, n int) *compiler {
	t.Helper()
	file, diags := parseConfig(testsrc.Chain(n), "big.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	decls, diags := decodeFile(file)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := newCompiler(decls[0], nil)
	c.collectEdges()
	return c
}
