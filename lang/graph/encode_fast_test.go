package graph_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// checkEncFast fails unless the generated encoder writes g, and the
// definition of each of its steps, byte for byte as encoding/json does
// (EncMarshal), and fails exactly when encoding/json fails.
func checkEncFast(t *testing.T, name string, g *graph.Graph) {
	t.Helper()
	fast, defs, ferr := graph.EncFast(g)
	ref, rerr := graph.EncMarshal(g)
	if (ferr != nil) != (rerr != nil) {
		t.Fatalf("%s: generated encoder error %v, encoding/json error %v", name, ferr, rerr)
	}
	if rerr != nil {
		return
	}
	if !bytes.Equal(fast, ref) {
		t.Fatalf("%s: the generated encoder differs from encoding/json at byte %d:\n fast %s\n json %s", name, diffAt(fast, ref), around(fast, diffAt(fast, ref)), around(ref, diffAt(fast, ref)))
	}
	for i, s := range g.Steps {
		if s == nil {
			continue
		}
		ref, err := graph.EncMarshal(graph.StepDefOf(s))
		if err != nil {
			t.Fatalf("%s: step %d: encoding/json fails on the definition the graph encoded with: %v", name, i, err)
		}
		if !bytes.Equal(defs[i], ref) {
			t.Fatalf("%s: step %d: the definition's encoding differs:\n fast %s\n json %s", name, i, defs[i], ref)
		}
	}
}

func diffAt(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func around(b []byte, i int) string {
	return string(b[max(0, i-60):min(len(b), i+60)])
}

// TestEncodeFastMatchesEncodingJSON: every graph of the stored corpus
// (examples, lang/testdata/valid, the conformance workflows, the IR
// fixtures), as compiled and as decoded, is encoded by the generated
// encoder exactly as encoding/json encodes it, each step's definition
// (the step hash's input) too.
func TestEncodeFastMatchesEncodingJSON(t *testing.T) {
	corpus := storedCorpus(t)
	if len(corpus) < 50 {
		t.Fatalf("only %d graphs in the corpus", len(corpus))
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range corpus {
			if !yield(k) {
				return
			}
		}
	}) {
		g := corpus[name]
		checkEncFast(t, name, g)
		b, err := graph.Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		d, err := graph.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkEncFast(t, name+" (decoded)", d)
	}
}

// encEdgeGraphs are graphs (as encoding/json reads them, not normalised)
// whose strings, numbers and collections take the paths of the encoder
// that the corpus may not: strings with quotes, backslashes, control
// characters, HTML characters, U+2028/U+2029, non-ASCII runes and invalid
// UTF-8; floats in each of encoding/json's formats and NaN;
// set values out of order and repeated; empty and nil collections; an
// invalid and a non-canonical literal.
var encEdgeGraphs = []string{
	`{"workflow":"a\"b\\c\u0001\n\t\b\f\r<>&\u2028\u2029é😀","version":"1","limits":{"attempts":1,"output_bytes":2,"parallel":3},"steps":null}`,
	`{"workflow":"w","version":"1","limits":{"attempts":0,"output_bytes":0,"parallel":0},"steps":[null,{"name":"s","hash":"","join":"","action":{"kind":"set","set":{"values":{"b":{"lit":1,"type":{"kind":"int"}},"a":null}}},"on_error":"","output_type":null,"retry":{"attempts":3,"backoff_ms":1,"multiplier":1.5,"when":{"cel":"a < b && c > d","type":null}}}]}`,
	`{"workflow":"w","version":"1","limits":{"attempts":0,"output_bytes":0,"parallel":0},"steps":[{"name":"s","hash":"","join":"","action":{"kind":""},"on_error":"","output_type":null,"retry":{"attempts":3,"backoff_ms":1,"multiplier":1e-7}},{"name":"t","hash":"","join":"","action":{"kind":""},"on_error":"","output_type":null,"retry":{"attempts":3,"backoff_ms":1,"multiplier":1e21}},{"name":"u","hash":"","join":"","action":{"kind":""},"on_error":"","output_type":null,"retry":{"attempts":3,"backoff_ms":1,"multiplier":123456789.125}}]}`,
	`{"workflow":"w","version":"1","limits":{"attempts":0,"output_bytes":0,"parallel":0},"steps":[],"inputs":[],"outputs":[{"name":"o","value":{"lit":" [ 1 , {\"b\":2,\"a\":\"<&>\"} ] ","type":null},"type":{"kind":"object","fields":{"z":{"kind":"string"},"a":{"kind":"list","elem":{"kind":"map","elem":null}}}}}]}`,
	`{"workflow":"w","version":"1","limits":{"attempts":0,"output_bytes":0,"parallel":0},"steps":[{"name":"s","hash":"","needs":[],"depends_on":["b","a","a"],"join":"","action":{"kind":"switch","switch":{"cases":[],"default":[]}},"on_error":"","output_type":null},{"name":"h","hash":"","join":"","action":{"kind":"http","http":{"method":"GET","url":null,"expect":[200,-1,0],"no_redirects":true}},"on_error":"","output_type":null}]}`,
	`{"workflow":"w","version":"1","limits":{"attempts":0,"output_bytes":0,"parallel":0},"steps":[{"name":"s","hash":"","join":"","action":{"kind":"switch","switch":{"cases":null}},"on_error":"","output_type":null}],"alerts":[{"name":"a","on":null,"action":{"kind":""}}],"schedules":[{"name":"x","overlap":"","catch_up":"","max_catch_up":-3}]}`,
	`{"workflow":"w","version":"1","limits":{"attempts":0,"output_bytes":0,"parallel":0},"steps":null,"outputs":[{"name":"o","value":{"object":{"b":null,"a":{"list":[null,{"template":{"parts":[{"text":"x\u0000"},{"expr":{"cel":"\"q\"","type":null}}]},"type":null}],"type":null}},"type":null},"type":null}]}`,
}

// encEdgeMutations are graphs that JSON cannot hold without the Go value
// being changed after decoding: repeated set names, an empty or invalid
// literal.
func encEdgeMutations(t *testing.T) []*graph.Graph {
	var out []*graph.Graph
	mk := func(f func(g *graph.Graph)) {
		var g graph.Graph
		if err := json.Unmarshal([]byte(encEdgeGraphs[1]), &g); err != nil {
			t.Fatal(err)
		}
		f(&g)
		out = append(out, &g)
	}
	mk(func(g *graph.Graph) {
		v := g.Steps[1].Action.Set.Values
		g.Steps[1].Action.Set.Values = append(v, graph.NamedValue{Name: "b", Value: v[0].Value}, graph.NamedValue{Name: "a"})
	})
	mk(func(g *graph.Graph) {
		g.Steps[1].Action.Set.Values = graph.NamedValues{{Name: "a"}, {Name: "a", Value: &graph.Value{Lit: json.RawMessage("2")}}}
	})
	mk(func(g *graph.Graph) { g.Steps[1].Action.Set.Values = graph.NamedValues{} })
	mk(func(g *graph.Graph) { g.Steps[1].Action.Set.Values[1].Value.Lit = json.RawMessage{} })
	mk(func(g *graph.Graph) { g.Steps[1].Action.Set.Values[1].Value.Lit = json.RawMessage("{bad") })
	mk(func(g *graph.Graph) { g.Steps[1].Retry.Multiplier = math.Copysign(0, -1) })
	mk(func(g *graph.Graph) { g.Steps[1].Retry.Multiplier = math.NaN() })
	mk(func(g *graph.Graph) {
		g.Steps[1].Name = string([]byte{'a', 0xff, 'b', 0xe2, 0x80})
		g.Steps[1].OutputType = &graph.Type{Kind: "k\u2028", Fields: map[string]*graph.Type{"x\x7f": nil}}
	})
	return out
}

// TestEncodeFastEdgeCases: the edge graphs above and their mutations,
// encoded by both encoders.
func TestEncodeFastEdgeCases(t *testing.T) {
	for i, src := range encEdgeGraphs {
		var g graph.Graph
		if err := json.Unmarshal([]byte(src), &g); err != nil {
			t.Fatalf("edge graph %d: %v", i, err)
		}
		checkEncFast(t, "edge graph "+string(rune('0'+i)), &g)
	}
	for i, g := range encEdgeMutations(t) {
		checkEncFast(t, "mutation "+string(rune('0'+i)), g)
	}
}

// FuzzEncodeFast: whatever graph encoding/json reads from the input
// (normalised or not), the generated encoder writes it as encoding/json
// does. Its seeds are the stored corpus, the FuzzDecode corpus and the
// edge graphs.
func FuzzEncodeFast(f *testing.F) {
	for _, g := range storedCorpus(f) {
		b, err := graph.Encode(g)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 20000 {
			f.Add(b)
		}
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		// go test fuzz v1 / []byte("...")
		lines := strings.Split(string(src), "\n")
		for _, l := range lines[1:] {
			if q, ok := strings.CutPrefix(strings.TrimSpace(l), "[]byte("); ok {
				var s string
				if err := json.Unmarshal([]byte(strings.TrimSuffix(q, ")")), &s); err == nil {
					f.Add([]byte(s))
				}
			}
		}
	}
	for _, src := range encEdgeGraphs {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var g graph.Graph
		if json.Unmarshal(b, &g) != nil {
			return
		}
		checkEncFast(t, "fuzz input", &g)
	})
}

// TestEncSizeHint: the buffer a long chain is encoded into is allocated
// once, large enough for the whole encoding and not a quarter more.
func TestEncSizeHint(t *testing.T) {
	for _, n := range []int{1, 40, 10000} {
		g := storedGraph(t, n)
		b, err := graph.Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		hint := graph.EncSizeHint(g)
		if hint < len(b) || hint > len(b)*5/4+4096 {
			t.Errorf("%d steps: hint %d for an encoding of %d bytes", n, hint, len(b))
		}
	}
}
