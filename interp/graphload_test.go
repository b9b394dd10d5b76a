package interp

import (
	"fmt"
	"strings"
	"testing"
)

// TestLoadCollectsAfterLargeGraph: loading a large stored graph ends with a
// collection, so that the decode's garbage does not set the heap goal of
// the run that follows; a small graph's load does not pay for one.
func TestLoadCollectsAfterLargeGraph(t *testing.T) {
	collections := 0
	defer func(f func()) { collectAfterLoad = f }(collectAfterLoad)
	collectAfterLoad = func() { collections++ }

	b := setup(t)
	chain := func(name string, n int) string {
		var s strings.Builder
		fmt.Fprintf(&s, "workflow %q {\n  version = \"1.0.0\"\n", name)
		for i := range n {
			fmt.Fprintf(&s, "  step \"s%d\" {\n    set { v = %d }\n  }\n", i, i)
		}
		return s.String() + "}\n"
	}
	b.compile(chain("small", 10))
	b.compile(chain("large", 5000))
	for _, wf := range []string{"small", "large", "large"} {
		b.e.graphs = newGraphCache(graphCacheSteps)
		before := collections
		vs, err := b.st.VersionHeads(b.ctx, wf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.e.load(b.ctx, wf, vs[0].Hash); err != nil {
			t.Fatal(err)
		}
		v, err := b.st.VersionGet(b.ctx, wf, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if len(v.Graph) >= collectAfterLoadBytes {
			want = 1
		}
		if wf == "large" && want == 0 {
			t.Fatalf("the large graph is %d bytes, under %d: make it larger", len(v.Graph), collectAfterLoadBytes)
		}
		if got := collections - before; got != want {
			t.Errorf("loading %s (%d bytes) collected %d times, want %d", wf, len(v.Graph), got, want)
		}
	}
	// A cached graph is not loaded again, and not collected for.
	vs, _ := b.st.VersionHeads(b.ctx, "large")
	before := collections
	if _, err := b.e.load(b.ctx, "large", vs[0].Hash); err != nil {
		t.Fatal(err)
	}
	if collections != before {
		t.Errorf("a cached graph's load collected")
	}
}
