package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeRoundTripEveryField(t *testing.T) {
	g := irFull(t)
	kinds := map[string]bool{}
	for _, s := range g.Steps {
		kinds[s.Action.Kind] = true
	}
	for _, k := range []string{KindNone, KindExec, KindHTTP, KindSet, KindSleep, KindWait, KindWorkflow, KindFail, KindSwitch} {
		if !kinds[k] {
			t.Fatalf("irFull has no step of kind %q", k)
		}
	}
	b, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, d) {
		b2, _ := Encode(d)
		t.Fatalf("decode(encode(g)) differs from g:\n%s\n%s", b, b2)
	}
	b2, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("encoding is not stable:\n%s\n%s", b, b2)
	}
	if bytes.Contains(b, []byte(`\u003c`)) || !bytes.Contains(b, []byte(`<&>`)) {
		t.Errorf("canonical JSON escapes HTML characters: %s", b)
	}
}

// TestEncodeNormalForm builds the same graph two ways: steps, inputs and
// needs in other orders, empty collections instead of nil, literal JSON
// with spaces and unsorted keys. Both have the same bytes and hash.
func TestEncodeNormalForm(t *testing.T) {
	a := irShip(t)
	b := irShip(t)
	b.Steps[0], b.Steps[6] = b.Steps[6], b.Steps[0]
	b.Steps[3], b.Steps[4] = b.Steps[4], b.Steps[3]
	b.Inputs[0], b.Inputs[2] = b.Inputs[2], b.Inputs[0]
	lbl := irFind(t, b, "label")
	lbl.Needs = []string{"ship_standard", "ship_express", "ship_standard"}
	irFind(t, b, "poll").DependsOn = []string{}
	b.Secrets = append(b.Secrets[:0:0], b.Secrets...)
	b.Outputs[0].Value.Type.Fields = map[string]*Type{}
	a.Outputs[0].Value.Type.Fields = nil
	irFind(t, b, "ship_express").Action.Exec.Command.Lit = json.RawMessage(` [ "./bin/ship" ,  "--express" ] `)
	irFind(t, b, "price").Action.Set.Values.Get("total").Template.Parts[0].Expr.Type = &Type{Kind: KindNumber, Fields: map[string]*Type{}}
	Seal(b)
	ea, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ea, eb) {
		t.Fatalf("equal graphs encode differently:\n%s\n%s", ea, eb)
	}
	ha, _ := Hash(a)
	hb, _ := Hash(b)
	if ha != hb || len(ha) != 64 {
		t.Fatalf("hashes differ or are malformed: %q %q", ha, hb)
	}
	var order []string
	for _, s := range b.Steps {
		order = append(order, s.Name)
	}
	want := "poll price charge route ship_express ship_standard label"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("step order = %s, want %s", got, want)
	}
}

// TestEncodeDoesNotModify: Encode normalises a copy of a graph that is not
// in normal form and leaves the graph itself alone.
func TestEncodeDoesNotModify(t *testing.T) {
	g := irShip(t)
	want, _ := Encode(g)
	g.Steps[0], g.Steps[1] = g.Steps[1], g.Steps[0]
	got, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("reordered steps encode differently")
	}
	if g.Steps[0].Name != "price" {
		t.Fatalf("Encode reordered the caller's steps")
	}
}

func TestHashStabilityAndSensitivity(t *testing.T) {
	base := irShip(t)
	baseHash, err := Hash(base)
	if err != nil {
		t.Fatal(err)
	}
	stepHashes := func(g *Graph) map[string]string {
		m := map[string]string{}
		for _, s := range g.Steps {
			m[s.Name] = s.Hash
		}
		return m
	}
	cases := []struct {
		name        string
		mutate      func(g *Graph)
		stepChanges []string // steps whose Hash must change
	}{
		{"timeout is policy", func(g *Graph) { irFind(t, g, "charge").TimeoutMS = 60000 }, nil},
		{"retry is policy", func(g *Graph) { irFind(t, g, "charge").Retry.Attempts = 2 }, nil},
		{"breaker is policy", func(g *Graph) { irFind(t, g, "charge").Breaker = "" }, nil},
		{"description", func(g *Graph) { g.Description = "other" }, nil},
		{"version", func(g *Graph) { g.Version = "1.4.1" }, nil},
		{"action", func(g *Graph) { irFind(t, g, "charge").Action.HTTP.Method = "PUT" }, []string{"charge"}},
		{"output type", func(g *Graph) { irFind(t, g, "poll").OutputType = TypeString }, []string{"poll"}},
		{"on_error", func(g *Graph) { irFind(t, g, "poll").OnError = "continue" }, []string{"poll"}},
		{"foreach concurrency", func(g *Graph) { irFind(t, g, "label").Foreach.Concurrency = 3 }, []string{"label"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := irShip(t)
			tc.mutate(g)
			Seal(g)
			h, err := Hash(g)
			if err != nil {
				t.Fatal(err)
			}
			if h == baseHash {
				t.Errorf("graph hash did not change")
			}
			before, after := stepHashes(base), stepHashes(g)
			for name := range before {
				changed := before[name] != after[name]
				want := false
				for _, s := range tc.stepChanges {
					want = want || s == name
				}
				if changed != want {
					t.Errorf("step %q hash changed = %v, want %v", name, changed, want)
				}
			}
		})
	}
}

func TestHashRequiresSeal(t *testing.T) {
	g := irShip(t)
	irFind(t, g, "charge").Action.HTTP.Method = "PUT"
	_, err := Hash(g)
	if err == nil || !strings.Contains(err.Error(), `step "charge" is not sealed`) {
		t.Fatalf("Hash of a graph changed after Seal: err = %v", err)
	}
	Seal(g)
	if _, err := Hash(g); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good, err := Encode(irShip(t))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	step := func(m map[string]any, i int) map[string]any { return m["steps"].([]any)[i].(map[string]any) }
	cases := []struct {
		name, src, want string
	}{
		{"unknown field", edit(func(m map[string]any) { m["colour"] = "red" }), `unknown field "colour"`},
		{"trailing data", string(good) + " {}", "data after its closing brace"},
		{"not json", "{", "not valid graph JSON"},
		{"bad version", edit(func(m map[string]any) { m["version"] = "v1" }), `version "v1" is not valid`},
		{"unknown kind", edit(func(m map[string]any) { step(m, 0)["action"].(map[string]any)["kind"] = "ftp" }), `action kind "ftp" is not known`},
		{"unknown need", edit(func(m map[string]any) { step(m, 1)["needs"] = []any{"nope"} }), `needs "nope", which is not a step`},
		{"cycle", edit(func(m map[string]any) {
			step(m, 0)["needs"] = []any{"route"}
			step(m, 1)["needs"] = []any{"poll"}
		}), "the needs form a cycle"},
		{"switch target", edit(func(m map[string]any) {
			step(m, 3)["action"].(map[string]any)["switch"].(map[string]any)["default"] = []any{"ghost"}
		}), `switch target "ghost" is not a step`},
		{"join", edit(func(m map[string]any) { step(m, 0)["join"] = "some" }), `join "some" is not valid; use "all", "any" or "first"`},
		{"duplicate step", edit(func(m map[string]any) { step(m, 1)["name"] = "poll" }), `step "poll" is declared more than once`},
		{"type kind", edit(func(m map[string]any) { step(m, 0)["output_type"] = map[string]any{"kind": "decimal"} }), `type kind "decimal" is not known`},
		{"two action blocks", edit(func(m map[string]any) {
			step(m, 0)["action"].(map[string]any)["wait"] = map[string]any{"signal": "x"}
		}), `holds a wait block`},
		{"breaker", edit(func(m map[string]any) { m["breakers"] = nil }), `uses breaker "payments", which is not declared`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidateGraphFull(t *testing.T) {
	if err := ValidateGraph(irFull(t)); err != nil {
		t.Fatal(err)
	}
}

// irWide builds a sealed graph of n exec steps, each needing up to three
// earlier ones.
func irWide(n int) *Graph {
	g := &Graph{Workflow: "wide", Version: "1.0.0", Limits: Limits{Attempts: 1, OutputBytes: 1, Parallel: 1}}
	for i := range n {
		s := irStep(fmt.Sprintf("s%04d", i), irExec("./bin/step", fmt.Sprint(i)))
		s.Action.Exec.Env = &Value{Object: map[string]*Value{"N": irText("n=", fmt.Sprintf("input.n + %d", i))}, Type: MapOf(TypeString)}
		for _, d := range []int{i - 1, i - 7, i - 31} {
			if d >= 0 {
				s.Needs = append(s.Needs, fmt.Sprintf("s%04d", d))
			}
		}
		g.Steps = append(g.Steps, s)
	}
	Seal(g)
	return g
}

func BenchmarkEncodeHash(b *testing.B) {
	g := irWide(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Hash(g); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCanonicalScalarFastPath checks the shortcut against the long way:
// every value it accepts is one encMarshal writes unchanged.
func TestCanonicalScalarFastPath(t *testing.T) {
	for _, in := range []string{`true`, `false`, `null`, `0`, `-0`, `12`, `-12`, `012`, `1.0`, `1e3`,
		`123456789012345`, `1234567890123456789`, `""`, `"abc def/1"`, `"a<b"`, `"tab\t"`, `"é"`, `"q\"q"`,
		`"\u0041"`, `[1,2]`, `{"b":1,"a":2}`, `"`, `-`, ``} {
		fast := encCanonicalScalar([]byte(in))
		var v any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			if fast {
				t.Errorf("%q: fast path accepts invalid JSON (%v)", in, err)
			}
			continue
		}
		long, err := encMarshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if fast && string(long) != in {
			t.Errorf("%q: fast path keeps it, canonical form is %q", in, long)
		}
	}
}
