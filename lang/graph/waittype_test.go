package graph_test

import (
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// TestMayHaveTypedWait: false only for a graph whose waits all lack a
// type; a typed wait, and a wait encoded in an unexpected way, count as
// typed.
func TestMayHaveTypedWait(t *testing.T) {
	g := graph.IrFull(t)
	raw, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	if graph.MayHaveTypedWait(raw) {
		t.Fatalf("irFull's untyped waits count as typed")
	}
	typed := false
	for i := range g.Steps {
		if w := g.Steps[i].Action.Wait; w != nil {
			w.Type = graph.ObjectOf(map[string]*graph.Type{"ok": graph.TypeBool})
			typed = true
		}
	}
	if !typed {
		t.Fatal("irFull has no wait step")
	}
	if raw, err = graph.Encode(g); err != nil {
		t.Fatal(err)
	}
	if !graph.MayHaveTypedWait(raw) {
		t.Fatalf("a typed wait is not found")
	}
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{`{"steps":[]}`, false},
		{`{"wait":{"signal":"go"}}`, false},
		{`{"wait":{"signal":"go","timeout_ms":1000}}`, false},
		{`{"wait":{"signal":"go","timeout_ms":1000,"type":{"kind":"bool"}}}`, true},
		{`{"wait":{"signal":"go","type":{"kind":"bool"}}}`, true},
		{`{"wait":{"signal":"a"},"x":{"wait":{"signal":"b","type":{"kind":"bool"}}}}`, true},
		{`{"wait":{ "signal":"go"}}`, true},
		{`{"wait":{"signal":"g\"o"}}`, true},
	} {
		if got := graph.MayHaveTypedWait([]byte(c.raw)); got != c.want {
			t.Errorf("MayHaveTypedWait(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
}
