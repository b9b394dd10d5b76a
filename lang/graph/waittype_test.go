package graph_test

import (
	"reflect"
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

// TestSignalTypes: the signal types of a graph name each typed wait's
// step under its signal, in graph order, and read back (DecodeSignalTypes)
// as the very types the graph decoder reads from the stored graph; a
// graph with no typed wait has {}.
func TestSignalTypes(t *testing.T) {
	g := graph.IrFull(t)
	if got := string(graph.SignalTypes(g)); got != `{}` {
		t.Fatalf("untyped waits: %s, want {}", got)
	}
	types := []*graph.Type{
		graph.ObjectOf(map[string]*graph.Type{"ok": graph.TypeBool, "by": graph.ListOf(graph.MapOf(graph.TypeAny)), "n": graph.TypeNumber}),
		graph.TypeString,
		graph.ObjectOf(nil),
		graph.ListOf(graph.TypeInt),
	}
	var waits []*graph.Step
	for i := range g.Steps {
		if w := g.Steps[i].Action.Wait; w != nil {
			w.Type = types[len(waits)%len(types)]
			waits = append(waits, g.Steps[i])
		}
	}
	raw, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := graph.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	st := graph.SignalTypes(g)
	if again := graph.SignalTypes(stored); string(again) != string(st) {
		t.Fatalf("signal types of the stored graph:\n%s\nof the graph:\n%s", again, st)
	}
	got, err := graph.DecodeSignalTypes(st)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]graph.TypedWait{}
	for _, s := range stored.Steps {
		if w := s.Action.Wait; s.Action.Kind == graph.KindWait && w != nil && w.Type != nil {
			want[w.Signal] = append(want[w.Signal], graph.TypedWait{Step: s.Name, Type: w.Type})
		}
	}
	if len(want) == 0 {
		t.Fatal("no typed wait in the graph")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded signal types:\n%#v\nwant (the graph decoder's):\n%#v", got, want)
	}
	for name, ws := range got {
		for i, tw := range ws {
			if tw.Type.String() != want[name][i].Type.String() {
				t.Errorf("signal %q step %q: type %s, want %s", name, tw.Step, tw.Type, want[name][i].Type)
			}
		}
	}
	for _, bad := range []string{`[]`, `{"go":[{"step":"s"}]}`, `{"go":`} {
		if _, err := graph.DecodeSignalTypes([]byte(bad)); err == nil {
			t.Errorf("DecodeSignalTypes(%s): no error", bad)
		}
	}
}
