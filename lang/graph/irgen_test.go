package graph

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
		"Catch":          func(s *Step) { s.Catch = []Catch{{Next: []string{"b"}}} },
		"Compensate":     func(s *Step) { s.Compensate = &Compensate{Action: irExec("undo")} },
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

// TestAddFieldTouchesOnePlace adds fields of several kinds to the IR's
// sources (a duration to Retry, compared as a part; a value to the exec
// action, compared whole; a set and an expression to Step, one def and one
// run; a string to Webhook), regenerates ir_gen.go and builds the package
// with them (go build -overlay): the codec, the normal form, the interning,
// the hash, the diff and the expression walk need no hand-written change.
func TestAddFieldTouchesOnePlace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package")
	}
	files, err := irgen.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	adds := map[string]map[string]string{
		"graph.go": {
			"Retry":      "CapMS int64 `json:\"cap_ms,omitempty\" graph:\"diff=ms:cap\"`",
			"ExecAction": "Umask *Value `json:\"umask,omitempty\"`",
			"Step": "Tags []string `json:\"tags,omitempty\" graph:\"def,set,diff=same:minor:tags\"`\n" +
				"Deadline *Expr `json:\"deadline,omitempty\" graph:\"run,slot=when,diff=cel:patch:deadline\"`",
		},
		"webhook.go": {"Webhook": "Path string `json:\"path,omitempty\" graph:\"diff=path\"`"},
	}
	dir := t.TempDir()
	replace := map[string]string{}
	for i, f := range files {
		add := adds[f.Name]
		if add == nil {
			continue
		}
		src := string(f.Src)
		for typ, fields := range add {
			at := strings.Index(src, "type "+typ+" struct {")
			end := strings.Index(src[at:], "\n}\n")
			if at < 0 || end < 0 {
				t.Fatalf("%s: no struct %s", f.Name, typ)
			}
			src = src[:at+end] + "\n" + fields + src[at+end:]
		}
		files[i].Src = []byte(src)
		replace[f.Name] = string(files[i].Src)
		delete(adds, f.Name)
	}
	if len(adds) > 0 {
		t.Fatalf("files not found: %v", adds)
	}
	out, err := irgen.Generate(files)
	if err != nil {
		t.Fatal(err)
	}
	replace[irgen.Output] = string(out)
	overlay := map[string]map[string]string{"Replace": {}}
	for name, src := range replace {
		abs, err := filepath.Abs(name)
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, name)
		if err := os.WriteFile(tmp, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay["Replace"][abs] = tmp
	}
	for _, want := range []string{`case "cap_ms":`, `case "umask":`, `case "tags":`, `case "deadline":`, `case "path":`, `fn(x.Deadline, s, "when")`, `fn.value(x.Umask, s, slot)`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the regenerated code lacks %s", want)
		}
	}
	ov, err := json.Marshal(overlay)
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", ovFile, ".")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lang/graph with the new fields does not build: %v\n%s", err, msg)
	}
}
