package graph

// Hand-built graphs for the encoding, diff, migration and render tests.
// Helpers are prefixed "ir" so they do not clash with other test files of
// the package.

import (
	"encoding/json"
	"testing"
)

func irExpr(cel string, t *Type) *Expr { return &Expr{CEL: cel, Type: t} }

// irLit is a literal value of type t.
func irLit(v any, t *Type) *Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &Value{Lit: b, Type: t}
}

// irTmpl is a template that is exactly one {{ cel }}.
func irTmpl(cel string, t *Type) *Value {
	return &Value{Template: &Template{Parts: []TemplatePart{{Expr: irExpr(cel, t)}}}, Type: t}
}

// irText is "prefix{{ cel }}".
func irText(prefix, cel string) *Value {
	return &Value{Template: &Template{Parts: []TemplatePart{{Text: prefix}, {Expr: irExpr(cel, TypeAny)}}}, Type: TypeString}
}

func irStep(name string, a Action, needs ...string) *Step {
	return &Step{Name: name, Needs: needs, Join: "all", Action: a, OnError: "fail", OutputType: TypeAny}
}

func irExec(args ...string) Action {
	return Action{Kind: KindExec, Exec: &ExecAction{Command: irLit(args, ListOf(TypeString))}}
}

func irHTTP(method, url string) Action {
	return Action{Kind: KindHTTP, HTTP: &HTTPAction{Method: method, URL: irLit(url, TypeString)}}
}

func irSet(values map[string]*Value) Action {
	return Action{Kind: KindSet, Set: &SetAction{Values: NamedValuesOf(values)}}
}

var irExecOutput = ObjectOf(map[string]*Type{
	"exit_code": TypeInt, "stdout": TypeString, "stderr": TypeString, "json": TypeAny,
})

// irShip builds the reference workflow of the diff tests (the shape of the
// language brief's ship-order), sealed. Every call builds a fresh graph.
func irShip(t testing.TB) *Graph {
	t.Helper()
	price := irStep("price", irSet(map[string]*Value{"total": irTmpl("input.amount * 1.2", TypeNumber)}))
	price.OutputType = ObjectOf(map[string]*Type{"total": TypeNumber})
	charge := irStep("charge", irHTTP("POST", "http://127.0.0.1:8080/charge"), "price")
	charge.Action.HTTP.Body = &Value{Object: map[string]*Value{
		"order":  irTmpl("input.order_id", TypeString),
		"amount": irTmpl("steps.price.output.total", TypeNumber),
	}, Type: ObjectOf(map[string]*Type{"order": TypeString, "amount": TypeNumber})}
	charge.Action.HTTP.Expect = []int{200, 201}
	charge.Breaker = "payments"
	charge.TimeoutMS = 30000
	charge.Retry = &Retry{Attempts: 6, BackoffMS: 1000, Multiplier: 2, When: irExpr("error.status >= 500", TypeBool)}
	route := irStep("route", Action{Kind: KindSwitch, Switch: &SwitchAction{
		Cases:   []SwitchCase{{When: irExpr("input.express", TypeBool), Next: []string{"ship_express"}}},
		Default: []string{"ship_standard"},
	}}, "charge")
	route.DependsOn = []string{"charge"}
	route.OutputType = TypeString
	express := irStep("ship_express", irExec("./bin/ship", "--express"), "route")
	express.OutputType = irExecOutput
	standard := irStep("ship_standard", irExec("./bin/ship"), "route")
	standard.OutputType = irExecOutput
	label := irStep("label", irExec("./bin/label"), "ship_express", "ship_standard")
	label.DependsOn = []string{"ship_express", "ship_standard"}
	label.Join = "any"
	label.Foreach = &Foreach{Items: irExpr("['box-1', 'box-2']", ListOf(TypeString)), Concurrency: 2, OnFailure: "dead_letter"}
	poll := irStep("poll", irExec("./bin/status"))
	poll.Until = &Until{Cond: irExpr("steps.poll.output.json.state == 'done'", TypeBool), IntervalMS: 30000, MaxIterations: 100}
	poll.OutputType = irExecOutput
	g := &Graph{
		Workflow:    "ship-order",
		Version:     "1.4.0",
		Description: "Charge, reserve, ship.",
		Inputs: []Input{
			{Name: "amount", Type: TypeNumber},
			{Name: "express", Type: TypeBool, Default: json.RawMessage(`false`)},
			{Name: "order_id", Type: TypeString},
		},
		Secrets:     []Secret{{Name: "alert_token", Env: "ALERT_TOKEN"}},
		Key:         irExpr("input.order_id", TypeString),
		DeadlineMS:  2 * 3600 * 1000,
		Concurrency: &Concurrency{Key: irExpr("'order-' + input.order_id", TypeString), Limit: 1, OnConflict: "queue"},
		Breakers:    []Breaker{{Name: "payments", Failures: 3, CooldownMS: 30000}},
		Limits:      Limits{Attempts: DefaultAttempts, OutputBytes: DefaultOutputBytes, Parallel: DefaultParallel},
		Steps:       []*Step{price, charge, route, express, standard, label, poll},
		Outputs:     []Output{{Name: "tracking", Value: irTmpl("steps.ship_express.output.stdout", TypeString), Type: TypeString}},
		Alerts: []Alert{{Name: "ops", On: []string{"failed", "interrupted"}, Action: Action{Kind: KindHTTP, HTTP: &HTTPAction{
			Method: "POST", URL: irLit("http://127.0.0.1:9000/alert", TypeString),
			Body: &Value{Object: map[string]*Value{"text": irText("alert: ", "event.kind")}, Type: ObjectOf(map[string]*Type{"text": TypeString})},
		}}}},
	}
	Seal(g)
	if err := ValidateGraph(g); err != nil {
		t.Fatalf("irShip is not valid: %v", err)
	}
	return g
}

// irFull extends irShip with a step of every remaining action kind and
// every optional field set, for round-trip tests.
func irFull(t testing.TB) *Graph {
	t.Helper()
	g := irShip(t)
	sleep := irStep("cool_down", Action{Kind: KindSleep, Sleep: &SleepAction{Until: irText("", "run.started_at")}})
	wait := irStep("approve", Action{Kind: KindWait, Wait: &WaitAction{Signal: "approval", TimeoutMS: 86400000}}, "cool_down")
	wait.DependsOn = []string{"cool_down"}
	child := irStep("restock", Action{Kind: KindWorkflow, Workflow: &WorkflowAction{Name: "restock", Version: "1.2", Input: &Value{Object: map[string]*Value{"sku": irTmpl("input.order_id", TypeString)}, Type: ObjectOf(map[string]*Type{"sku": TypeString})}}})
	child.IdempotencyKey = irText("restock-", "input.order_id")
	reject := irStep("reject", Action{Kind: KindFail, Fail: &FailAction{Message: irText("rejected by ", "steps.approve.output.by")}}, "approve")
	reject.When = irExpr("steps.approve.output.approved == false", TypeBool)
	reject.OnError = "continue"
	run := irStep("run_script", Action{Kind: KindExec, Exec: &ExecAction{
		Command: irLit("echo hi <&> there", TypeString), Shell: true,
		Dir:   irLit("/tmp", TypeString),
		Env:   &Value{Object: map[string]*Value{"TOKEN": irText("", "secrets.alert_token")}, Type: MapOf(TypeString)},
		Stdin: &Value{List: []*Value{irLit(map[string]any{"b": 1.5, "a": []any{nil, true}}, TypeAny), irTmpl("input.amount", TypeNumber)}, Type: ListOf(TypeAny)},
	}})
	run.TimeoutMS = 1500
	run.Retry = &Retry{Attempts: 3, BackoffMS: 100, Multiplier: 1.5, MaxDelayMS: 1000, JitterMS: 50}
	run.Compensate = &Compensate{Action: Action{Kind: KindExec, Exec: &ExecAction{Command: irLit([]string{"undo"}, ListOf(TypeString))}}, TimeoutMS: 1500}
	run.Catch = []Catch{{When: irExpr("error.kind == 'exec'", TypeBool), Next: []string{"done"}}, {Next: []string{"done"}}}
	irFind(t, g, "charge").Action.HTTP.Headers = &Value{Object: map[string]*Value{"X-Order": irTmpl("input.order_id", TypeString)}, Type: MapOf(TypeString)}
	join := irStep("done", Action{}, "reject", "restock", "run_script")
	join.OutputType = TypeNull
	g.Steps = append(g.Steps, sleep, wait, child, reject, run, join)
	g.Outputs = append(g.Outputs, Output{Name: "answer", Value: irLit(42, TypeNumber), Type: TypeNumber})
	Seal(g)
	if err := ValidateGraph(g); err != nil {
		t.Fatalf("irFull is not valid: %v", err)
	}
	return g
}

// irFind returns the named step of g, failing the test when there is none.
func irFind(t testing.TB, g *Graph, name string) *Step {
	t.Helper()
	for _, s := range g.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q", name)
	return nil
}
