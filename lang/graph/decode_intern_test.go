package graph_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// decodeWhole is Decode without the stream decoder or interning: the
// reference its result must equal.
func decodeWhole(b []byte) (*graph.Graph, error) {
	g, err := jsonWhole(b)
	if err != nil {
		return nil, err
	}
	if err := graph.ValidateGraph(g); err != nil {
		return nil, err
	}
	return g, nil
}

// TestDecodeSharesTypes decodes a compiled chain: the graph encodes to the
// same bytes as the one decoded whole, and the steps' equal types are one
// shared tree.
func TestDecodeSharesTypes(t *testing.T) {
	m, diags := lang.LoadFile("big.hcl", testsrc.Chain(40))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	b, err := graph.Encode(m.Workflows[0].Graph)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := decodeWhole(b)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := graph.Encode(g)
	want, _ := graph.Encode(ref)
	if !bytes.Equal(got, want) || !bytes.Equal(got, b) {
		t.Fatal("the decoded graph does not encode to the stored bytes")
	}
	s1, s2 := g.Steps[1], g.Steps[2]
	if s1.OutputType != s2.OutputType || ref.Steps[1].OutputType == ref.Steps[2].OutputType {
		t.Fatal("equal output types are not shared (or the reference shares them too)")
	}
	if s1.When.Type != graph.TypeBool {
		t.Fatalf("a when's type is %+v, not the shared bool", s1.When.Type)
	}
	if s1.Action.Set.Values.Get("n").Type != s2.Action.Set.Values.Get("n").Type {
		t.Fatal("equal value types are not shared")
	}
	// Distinct structures stay distinct.
	if g.Steps[1].OutputType == g.Steps[1].OutputType.Fields["n"] || g.Steps[1].OutputType.Fields["n"] == g.Steps[1].OutputType.Fields["label"] {
		t.Fatal("different types were merged")
	}
}

// TestDecodeStreamMatchesWhole decodes records the stream decoder hands
// back to the whole decode (odd member order, null steps, unknown or
// misspelt members, bad step JSON) and records it takes: Decode agrees with
// the whole decode on each, error or graph.
func TestDecodeStreamMatchesWhole(t *testing.T) {
	good, err := graph.Encode(graph.IrFull(t))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	join := func(order []string, extra string) string {
		var parts []string
		for _, k := range order {
			parts = append(parts, `"`+k+`":`+string(m[k]))
		}
		if extra != "" {
			parts = append(parts, extra)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	var keys []string
	for k := range m {
		if k != "steps" {
			keys = append(keys, k)
		}
	}
	cases := map[string]string{
		"as stored":         string(good),
		"steps first":       join(append([]string{"steps"}, keys...), ""),
		"steps twice":       join(append([]string{"steps"}, keys...), `"steps":`+string(m["steps"])),
		"no steps":          join(keys, ""),
		"null steps":        join(keys, `"steps":null`),
		"empty steps":       join(keys, `"steps":[]`),
		"steps misspelt":    join(keys, `"Steps":`+string(m["steps"])),
		"unknown member":    join(append([]string{"steps"}, keys...), `"colour":"red"`),
		"unknown step key":  strings.Replace(string(good), `"name":"poll"`, `"name":"poll","colour":1`, 1),
		"step not object":   join(keys, `"steps":[1]`),
		"steps not list":    join(keys, `"steps":{}`),
		"top not object":    `[` + string(good) + `]`,
		"null":              `null`,
		"trailing data":     string(good) + ` {}`,
		"cut short":         string(good[:len(good)/2]),
		"bad member type":   join(append([]string{"steps"}, keys...), `"limits":"none"`),
		"null step in list": join(keys, `"steps":[null]`),
		"duplicate member":  join(append([]string{"steps"}, keys...), `"limits":`+string(m["limits"])),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := graph.Decode([]byte(src))
			ref, rerr := decodeWhole([]byte(src))
			if (err == nil) != (rerr == nil) {
				t.Fatalf("Decode error = %v, whole decode error = %v", err, rerr)
			}
			if err != nil {
				return
			}
			got, _ := graph.Encode(g)
			want, _ := graph.Encode(ref)
			if !bytes.Equal(got, want) {
				t.Fatalf("Decode gave\n%s\nthe whole decode\n%s", got, want)
			}
		})
	}
}
