package expr

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

func TestStepScope(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	plain := ctStep(graph.KindExec, "fan")
	each := ctStep(graph.KindExec, "build")
	each.Foreach = &graph.Foreach{Items: &graph.Expr{CEL: "input.tags", Type: graph.ListOf(graph.TypeString)}}
	loop := ctStep(graph.KindSet, "price")
	loop.Until = &graph.Until{Cond: &graph.Expr{CEL: "true", Type: graph.TypeBool}}
	tests := []struct {
		name      string
		scope     *Scope
		vars      string // visible variable names
		steps     string // visible steps
		item      *graph.Type
		secrets   bool
		selfType  *graph.Type // type of steps.self.output, nil: not visible
		fanOutput *graph.Type
	}{
		{"when", StepScope(g, plain, SlotWhen), "input,run,steps", "build,fan,price", nil, false, nil, graph.ListOf(ctExecOutput)},
		{"items", StepScope(g, each, SlotItems), "input,run,steps", "build", nil, false, nil, nil},
		{"case_when", StepScope(g, plain, SlotCaseWhen), "input,run,steps", "build,fan,price", nil, false, nil, graph.ListOf(ctExecOutput)},
		{"exec data", StepScope(g, plain, SlotData), "input,run,steps,secrets", "build,fan,price", nil, true, nil, graph.ListOf(ctExecOutput)},
		{"foreach data", StepScope(g, each, SlotData), "input,run,steps,item,index,secrets", "build", graph.TypeString, true, nil, nil},
		{"idempotency_key", StepScope(g, each, SlotIdempotencyKey), "input,run,steps,item,index", "build", graph.TypeString, false, nil, nil},
		{"set data in until", StepScope(g, loop, SlotData), "input,run,steps,iteration", "build,price,self", nil, false, graph.TypeAny, nil},
		{"until", StepScope(g, loop, SlotUntil), "input,run,steps,iteration", "build,price,self", nil, false, ctExecOutput, nil},
		{"until without until block", StepScope(g, plain, SlotUntil), "input,run,steps,iteration", "build,fan,price,self", nil, false, ctExecOutput, graph.ListOf(ctExecOutput)},
		{"retry_when", StepScope(g, each, SlotRetryWhen), "input,run,steps,item,index,error", "build", graph.TypeString, false, nil, nil},
		{"retry_when in until", StepScope(g, loop, SlotRetryWhen), "input,run,steps,iteration,error", "build,price", nil, false, nil, nil},
		{"key", GraphScope(g, SlotKey), "input", "", nil, false, nil, nil},
		{"concurrency_key", GraphScope(g, SlotConcurrencyKey), "input", "", nil, false, nil, nil},
		{"output", GraphScope(g, SlotOutput), "input,run,steps", "build,fan,other,price", nil, false, nil, graph.ListOf(ctExecOutput)},
		{"alert", GraphScope(g, SlotAlert), "input,run,steps,event,secrets", "build,fan,other,price", nil, true, nil, graph.ListOf(ctExecOutput)},
	}
	for _, tt := range tests {
		sc := tt.scope
		if got := strings.Join(sc.VisibleNames(), ","); got != tt.vars {
			t.Errorf("%s: variables %s, want %s", tt.name, got, tt.vars)
		}
		if got := strings.Join(sc.stepNames(), ","); got != tt.steps {
			t.Errorf("%s: steps %s, want %s", tt.name, got, tt.steps)
		}
		if !tt.item.Equal(sc.Item) {
			t.Errorf("%s: item %s, want %s", tt.name, sc.Item, tt.item)
		}
		if got := reflect.DeepEqual(sc.Secrets, []string{"token"}); got != tt.secrets {
			t.Errorf("%s: secrets %v", tt.name, sc.Secrets)
		}
		if !tt.selfType.Equal(sc.Steps["self"]) {
			t.Errorf("%s: steps.self.output %s, want %s", tt.name, sc.Steps["self"], tt.selfType)
		}
		if !tt.fanOutput.Equal(sc.Steps["fan"]) {
			t.Errorf("%s: steps.fan.output %s, want %s", tt.name, sc.Steps["fan"], tt.fanOutput)
		}
	}
}

func TestStepScopePartialGraph(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	g.Steps = g.Steps[:1] // only build compiled so far
	s := ctStep(graph.KindExec, "price", "build")
	sc := StepScope(g, s, SlotWhen)
	if got := strings.Join(sc.stepNames(), ","); got != "build" {
		t.Errorf("steps = %s, want build", got)
	}
	_, diags := ctCheck("steps.price.output.total > 1", sc, graph.TypeBool)
	if !diags.HasErrors() || diags[0].Summary != "Unknown step" {
		t.Errorf("reference to an uncompiled step: %s", diags)
	}
}

// The agent-loop pattern: an until step's action reads its previous
// iteration, guarded in iteration 0.
func TestUntilPreviousIteration(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	refine := &graph.Step{Name: "refine", Action: graph.Action{Kind: graph.KindExec}, OutputType: ctExecOutput,
		Until: &graph.Until{Cond: &graph.Expr{CEL: "true", Type: graph.TypeBool}, MaxIterations: 5}}
	sc := StepScope(g, refine, SlotData)
	p, exprs := ctProgram(t, sc, "iteration == 0 ? input.order_id : steps.refine.output.json.draft + string(iteration)")
	a := ctActivation()
	got, err := p.Eval(context.Background(), exprs[0], a)
	if err != nil || got != "o-1" {
		t.Errorf("iteration 0 = %v, %v", got, err)
	}
	a.Iteration = 2
	a.Steps["refine"] = StepResult{Status: "completed", Attempts: 1, Output: map[string]any{"exit_code": 0.0, "stdout": "", "stderr": "", "json": map[string]any{"draft": "d"}}}
	got, err = p.Eval(context.Background(), exprs[0], a)
	if err != nil || got != "d2" {
		t.Errorf("iteration 2 = %v, %v", got, err)
	}
	if _, diags := ctCheck("iteration > 0", StepScope(g, refine, SlotWhen), graph.TypeBool); !diags.HasErrors() ||
		!strings.Contains(diags[0].Detail, "iteration is only visible") {
		t.Errorf("iteration in when: %s", diags)
	}
}

// TestWriteVarsKey: the variables' key names each variable and its type,
// and is written without fmt: the builder and the input type's text
// allocate, the values do not (fmt allocated 7 times here).
func TestWriteVarsKey(t *testing.T) {
	s := &Scope{Inputs: graph.ObjectOf(map[string]*graph.Type{"n": graph.TypeNumber}), Run: true, Steps: map[string]*graph.Type{}, Iteration: true}
	var b strings.Builder
	s.writeVarsKey(&b)
	if want := "input=object({n = number});run=true;item=-;iteration=true;error=false;event=false;steps=true;"; b.String() != want {
		t.Errorf("key %q, want %q", b.String(), want)
	}
	s.Schedule, s.Secrets = true, []string{"a", "b"}
	b.Reset()
	s.writeVarsKey(&b)
	if want := "input=object({n = number});run=true;item=-;iteration=true;error=false;event=false;steps=true;schedule;secrets[\"a\" \"b\"]"; b.String() != want {
		t.Errorf("key %q, want %q", b.String(), want)
	}
	s.Schedule, s.Secrets = false, nil
	allocs := testing.AllocsPerRun(100, func() {
		var b strings.Builder
		b.Grow(128)
		s.writeVarsKey(&b)
	})
	if allocs > 5 {
		t.Errorf("writing the key allocates %v times, want at most 5", allocs)
	}
}
