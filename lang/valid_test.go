package lang

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// loadValid compiles one file of testdata/valid and fails on any
// diagnostic but the warnings its lines announce with a comment
// "# WARNING: SUMMARY"; an announced warning must be given.
func loadValid(t *testing.T, name string) *Module {
	t.Helper()
	m, diags := LoadPaths([]string{filepath.Join("testdata/valid", name)})
	diags = expectedWarnings(t, name, diags)
	if len(diags) > 0 {
		var b bytes.Buffer
		_ = WriteDiagnostics(&b, m.Files, diags, false, 0)
		t.Fatalf("%s: unexpected diagnostics:\n%s", name, b.String())
	}
	return m
}

func graphOf(t *testing.T, m *Module, workflow string) *graph.Graph {
	t.Helper()
	w := m.Workflow(workflow)
	if w == nil || w.Graph == nil {
		t.Fatalf("workflow %q missing or without graph", workflow)
	}
	return w.Graph
}

func stepOf(t *testing.T, g *graph.Graph, name string) *graph.Step {
	t.Helper()
	for _, s := range g.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("graph %q has no step %q", g.Workflow, name)
	return nil
}

func TestValidCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			m := loadValid(t, filepath.Base(f))
			if len(m.Workflows) == 0 {
				t.Fatal("no workflows")
			}
			for _, w := range m.Workflows {
				if w.Graph == nil {
					t.Fatalf("workflow %q has no graph", w.Name)
				}
				if _, err := graph.Hash(w.Graph); err != nil {
					t.Fatalf("hash: %v", err)
				}
				b, err := graph.Encode(w.Graph)
				if err != nil {
					t.Fatal(err)
				}
				g2, err := graph.Decode(b)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if !reflect.DeepEqual(g2, w.Graph) {
					t.Errorf("Decode(Encode(g)) differs from g")
				}
				if w.Sources.Block("workflow").Start != w.Range.Start {
					t.Errorf("source map workflow range %v, workflow range %v", w.Sources.Block("workflow"), w.Range)
				}
			}
		})
	}
}

// TestShipOrderGraph checks facts of the language brief's example.
func TestShipOrderGraph(t *testing.T) {
	g := graphOf(t, loadValid(t, "ship_order.hcl"), "ship-order")

	var order []string
	for _, s := range g.Steps {
		order = append(order, s.Name)
	}
	want := []string{"approve", "cool_down", "poll", "price", "charge", "reject", "restock", "route", "ship_express", "ship_standard", "label"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("step order %v, want %v", order, want)
	}
	needs := map[string][]string{
		"charge":       {"price"},
		"route":        {"charge"},
		"ship_express": {"route"},
		"label":        {"ship_express", "ship_standard"},
		"reject":       {"approve"},
		"poll":         nil, // its own until is not a dependency
	}
	for name, n := range needs {
		if got := stepOf(t, g, name).Needs; !reflect.DeepEqual(got, n) {
			t.Errorf("step %q needs %v, want %v", name, got, n)
		}
	}
	if g.Limits != (graph.Limits{Attempts: 1000, OutputBytes: 1 << 20, Parallel: 16}) {
		t.Errorf("limits %+v", g.Limits)
	}
	charge := stepOf(t, g, "charge")
	if charge.TimeoutMS != 30000 || charge.Breaker != "payments" {
		t.Errorf("charge timeout %d breaker %q", charge.TimeoutMS, charge.Breaker)
	}
	wantRetry := graph.Retry{Attempts: 6, BackoffMS: 1000, Multiplier: 2, MaxDelayMS: 60000, JitterMS: 500}
	if r := charge.Retry; r == nil || r.When == nil || r.Attempts != wantRetry.Attempts || r.BackoffMS != wantRetry.BackoffMS ||
		r.Multiplier != wantRetry.Multiplier || r.MaxDelayMS != wantRetry.MaxDelayMS || r.JitterMS != wantRetry.JitterMS {
		t.Errorf("charge retry %+v, want %+v with a when", charge.Retry, wantRetry)
	}
	if a := charge.Action.HTTP; a == nil || a.Method != "POST" || !reflect.DeepEqual(a.Expect, []int{200, 201}) {
		t.Errorf("charge http %+v", charge.Action.HTTP)
	}
	approve := stepOf(t, g, "approve")
	if approve.TimeoutMS != 0 || approve.Retry != nil || !approve.OutputType.Equal(graph.TypeAny) {
		t.Errorf("approve: timeout %d retry %+v output %s; a wait takes neither the default timeout nor the default retry", approve.TimeoutMS, approve.Retry, approve.OutputType)
	}
	if got := stepOf(t, g, "price").OutputType; !got.Equal(graph.ObjectOf(map[string]*graph.Type{"total": graph.TypeNumber})) {
		t.Errorf("price output %s", got)
	}
	if got := stepOf(t, g, "route").OutputType; !got.Equal(graph.TypeString) {
		t.Errorf("route output %s", got)
	}
	if got := stepOf(t, g, "cool_down").OutputType; !got.Equal(sleepOutputType) {
		t.Errorf("cool_down output %s", got)
	}
	if got := stepOf(t, g, "reject").OutputType; !got.Equal(graph.TypeNull) {
		t.Errorf("reject output %s", got)
	}
	label := stepOf(t, g, "label")
	if label.Join != "any" || label.Foreach == nil || label.Foreach.Concurrency != 2 || label.Foreach.OnFailure != "dead_letter" {
		t.Errorf("label %+v foreach %+v", label, label.Foreach)
	}
	poll := stepOf(t, g, "poll")
	if poll.Until == nil || poll.Until.IntervalMS != 30000 || poll.Until.MaxIterations != 100 {
		t.Errorf("poll until %+v", poll.Until)
	}
	if len(g.Outputs) != 1 || !g.Outputs[0].Type.Equal(graph.TypeString) {
		t.Errorf("outputs %+v", g.Outputs)
	}
	if g.Key == nil || g.Key.CEL != "input.order_id" || g.DeadlineMS != 2*3600*1000 {
		t.Errorf("key %+v deadline %d", g.Key, g.DeadlineMS)
	}
	if in := g.Inputs[1]; in.Name != "express" || string(in.Default) != "false" {
		t.Errorf("input %+v", in)
	}
}

func TestDefaultsAndOutputTypes(t *testing.T) {
	g := graphOf(t, loadValid(t, "limits_defaults.hcl"), "tuned")
	if g.Limits != (graph.Limits{Attempts: 5000, OutputBytes: 65536, Parallel: 2}) {
		t.Errorf("limits %+v", g.Limits)
	}
	load := stepOf(t, g, "load")
	if load.TimeoutMS != 45000 || load.Retry == nil || load.Retry.Attempts != 2 || load.Retry.BackoffMS != 2000 ||
		load.Retry.Multiplier != defaultRetryMultiplier || load.Retry.When == nil {
		t.Errorf("load timeout %d retry %+v", load.TimeoutMS, load.Retry)
	}
	if r := stepOf(t, g, "transform").Retry; r == nil || r.Attempts != 7 || r.BackoffMS != 2000 || r.When == nil {
		t.Errorf("transform retry %+v: the step's attempts over the defaults' backoff and when", r)
	}
	if mark := stepOf(t, g, "mark"); mark.Retry != nil || mark.TimeoutMS != 0 {
		t.Errorf("mark: a set step takes no default retry or timeout: %+v %d", mark.Retry, mark.TimeoutMS)
	}
	if c := g.Concurrency; c == nil || c.Limit != 3 || c.OnConflict != "skip" {
		t.Errorf("concurrency %+v", c)
	}

	g = graphOf(t, loadValid(t, "exec_shell.hcl"), "exec-forms")
	if s := stepOf(t, g, "argv"); s.TimeoutMS != graph.DefaultTimeoutMS || !s.OutputType.Equal(execOutputType) {
		t.Errorf("argv timeout %d output %s", s.TimeoutMS, s.OutputType)
	}
	script := stepOf(t, g, "script")
	if !script.Action.Exec.Shell || script.Action.Exec.Command.Template == nil || script.TimeoutMS != 10000 {
		t.Errorf("script %+v", script.Action.Exec)
	}
	if env := script.Action.Exec.Env; env == nil || env.Object == nil || string(env.Object["COUNT"].Lit) != "3" {
		t.Errorf("env %+v", env)
	}

	g = graphOf(t, loadValid(t, "foreach_until.hcl"), "loops")
	ping := stepOf(t, g, "ping")
	if ping.OnError != "continue" || ping.Foreach.Items.Type.String() != "list(string)" {
		t.Errorf("ping %+v", ping.Foreach)
	}
	if s := stepOf(t, g, "wait_ready"); !reflect.DeepEqual(s.Needs, []string{"summary"}) || s.Until.MaxIterations != 12 || s.Until.IntervalMS != 5000 {
		t.Errorf("wait_ready needs %v until %+v", s.Needs, s.Until)
	}

	g = graphOf(t, loadValid(t, "switch_join.hcl"), "routing")
	route := stepOf(t, g, "route")
	if sw := route.Action.Switch; sw == nil || len(sw.Cases) != 2 || !reflect.DeepEqual(sw.Cases[0].Next, []string{"notify", "priority"}) ||
		!reflect.DeepEqual(sw.Default, []string{"standard"}) {
		t.Errorf("switch %+v", route.Action.Switch)
	}
	for _, n := range []string{"priority", "notify", "standard"} {
		if s := stepOf(t, g, n); !reflect.DeepEqual(s.Needs, []string{"route"}) {
			t.Errorf("%s needs %v, want [route]", n, s.Needs)
		}
	}
	if s := stepOf(t, g, "done"); s.Action.Kind != graph.KindNone || !s.OutputType.Equal(graph.TypeNull) || s.Join != "any" {
		t.Errorf("done %+v", s)
	}

	g = graphOf(t, loadValid(t, "types.hcl"), "types")
	types := map[string]string{}
	for _, in := range g.Inputs {
		types[in.Name] = in.Type.String() + " " + string(in.Default)
	}
	wantTypes := map[string]string{
		"s": "string ", "n": "number 1.5", "b": "bool true", "l": `list(string) ["a","b"]`,
		"m": `map(number) {"a":1,"b":2}`, "set": `list(string) ["x"]`,
		"o":        `object({name = string, nested = object({ok = bool}), tags = list(string)}) {"name":"n","nested":{"ok":false},"tags":[]}`,
		"anything": "any null", "described": "any ",
	}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Errorf("input types\n got %v\nwant %v", types, wantTypes)
	}
	use := stepOf(t, g, "use")
	if got := use.OutputType.String(); got != "object({first = string, lit = object({a = list(number), b = string}), name = string, ok = bool, sum = number, text = string, upper = string})" {
		t.Errorf("use output %s", got)
	}
}

func TestSourceMap(t *testing.T) {
	m := loadValid(t, "ship_order.hcl")
	sm := m.Workflow("ship-order").Sources
	check := func(what string, r hcl.Range, line int, text string) {
		t.Helper()
		src := m.Files[r.Filename].Bytes
		if r.Start.Line != line || !strings.HasPrefix(string(r.SliceBytes(src)), text) {
			t.Errorf("%s: line %d %q, want line %d starting %q", what, r.Start.Line, r.SliceBytes(src), line, text)
		}
	}
	check("step block", sm.Block("step.charge"), 44, `step "charge"`)
	check("step label", sm.Label("step.charge"), 44, `"charge"`)
	check("retry when", sm.Attr("step.charge.retry.when"), 54, `"error.status`)
	check("http block", sm.Block("step.charge.http"), 46, `http`)
	check("version", sm.Attr("workflow.version"), 2, `"1.4.0"`)
	check("missing attr falls back to the block", sm.Attr("step.charge.timeout"), 44, `step "charge"`)
}

// expectedWarnings drops from diags the warnings announced on their line
// of testdata/valid/name by "# WARNING: SUMMARY", and fails for an
// announcement no warning answers.
func expectedWarnings(t *testing.T, name string, diags hcl.Diagnostics) hcl.Diagnostics {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata/valid", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	answered := map[int]bool{}
	var rest hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning && d.Subject != nil && d.Subject.Start.Line <= len(lines) &&
			strings.Contains(lines[d.Subject.Start.Line-1], "# WARNING: "+d.Summary) {
			answered[d.Subject.Start.Line] = true
			continue
		}
		rest = append(rest, d)
	}
	for i, l := range lines {
		if strings.Contains(l, "# WARNING: ") && !answered[i+1] {
			t.Errorf("%s:%d announces a warning that was not given: %s", name, i+1, l)
		}
	}
	return rest
}
