package graph

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph/internal/irgen"
)

// TestIRGenUpToDate: ir_gen.go is what irgen writes for the package's
// files now (go generate ./lang/graph rewrites it).
func TestIRGenUpToDate(t *testing.T) {
	files, err := irgen.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := irgen.Generate(files)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(irgen.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("ir_gen.go is stale: run go generate ./lang/graph")
	}
}

// TestStepHashCoversDefFields changes each field of a step in turn: the
// step's hash changes exactly for the fields tagged def, and a run field
// (timeout, retry, breaker) leaves it alone.
func TestStepHashCoversDefFields(t *testing.T) {
	base := func() *Step {
		s := irFull(t).Steps[0]
		c := *s
		return &c
	}
	h0, err := StepHash(base())
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]func(s *Step){
		"Name":           func(s *Step) { s.Name = "other" },
		"Needs":          func(s *Step) { s.Needs = append(s.Needs, "zz") },
		"DependsOn":      func(s *Step) { s.DependsOn = append(s.DependsOn, "zz") },
		"Join":           func(s *Step) { s.Join = "any" },
		"When":           func(s *Step) { s.When = irExpr("false", TypeBool) },
		"Action":         func(s *Step) { s.Action = irExec("other") },
		"TimeoutMS":      func(s *Step) { s.TimeoutMS += 1000 },
		"Retry":          func(s *Step) { s.Retry = &Retry{Attempts: 7} },
		"Breaker":        func(s *Step) { s.Breaker = "other" },
		"Foreach":        func(s *Step) { s.Foreach = &Foreach{Items: irExpr("[9]", ListOf(TypeInt)), Concurrency: 2} },
		"Until":          func(s *Step) { s.Until = &Until{Cond: irExpr("true", TypeBool), MaxIterations: 3} },
		"OnError":        func(s *Step) { s.OnError = "continue" },
		"IdempotencyKey": func(s *Step) { s.IdempotencyKey = irLit("k", TypeString) },
		"OutputType":     func(s *Step) { s.OutputType = TypeInt },
	}
	st := reflect.TypeFor[Step]()
	for i := range st.NumField() {
		f := st.Field(i)
		tag, ok := f.Tag.Lookup("graph")
		if !ok || f.Name == "Hash" {
			continue
		}
		change, ok := changes[f.Name]
		if !ok {
			t.Errorf("Step.%s: the test has no change for it", f.Name)
			continue
		}
		s := base()
		change(s)
		h, err := StepHash(s)
		if err != nil {
			t.Fatal(err)
		}
		def := strings.HasPrefix(tag, "def")
		if def && h == h0 {
			t.Errorf("Step.%s is tagged def, but changing it leaves the step's hash", f.Name)
		}
		if !def && h != h0 {
			t.Errorf("Step.%s is not tagged def, but changing it changes the step's hash", f.Name)
		}
	}
}

// TestStepFieldsRoundTrip: a step with every field set decodes to what was
// encoded, and Diff finds no change between the two.
func TestStepFieldsRoundTrip(t *testing.T) {
	g := irFull(t)
	b, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if c := Diff(g, d); c != nil {
		t.Fatalf("Diff after a round trip: %v", c)
	}
	b2, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("the round trip changes the encoding")
	}
	// Every field of Step is set in some step of the graph, so that the
	// round trip covers it.
	var raw struct{ Steps []map[string]json.RawMessage }
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range raw.Steps {
		for k := range s {
			seen[k] = true
		}
	}
	st := reflect.TypeFor[Step]()
	for i := range st.NumField() {
		key, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if key != "" && key != "-" && !seen[key] {
			t.Errorf("no step of irFull sets %s", key)
		}
	}
}
