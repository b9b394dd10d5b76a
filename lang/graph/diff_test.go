package graph

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDiffBumpTable has one case per row of the bump table (versioning
// brief, plus the cases diff.go decides). Each mutates the reference graph
// and expects one given change among the result, and the required bump.
func TestDiffBumpTable(t *testing.T) {
	cases := []struct {
		row    string
		mutate func(t *testing.T, g *Graph)
		want   string // one of the changes, as Change.String renders it
		bump   Bump   // the required bump of all changes
	}{
		// MAJOR
		{"step removed", func(t *testing.T, g *Graph) { irDrop(g, "poll") }, `step "poll" removed: MAJOR`, BumpMajor},
		{"step renamed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Name = "poll2" }, `step "poll" removed: MAJOR`, BumpMajor},
		{"action kind changed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Action = irHTTP("GET", "http://x") },
			`step "poll" action changed (exec → http): MAJOR`, BumpMajor},
		{"edge between existing steps added", func(t *testing.T, g *Graph) {
			s := irFind(t, g, "label")
			s.Needs = append(s.Needs, "price")
		}, `step "label" now needs step "price": MAJOR`, BumpMajor},
		{"edge between existing steps removed", func(t *testing.T, g *Graph) { irFind(t, g, "charge").Needs = nil },
			`step "charge" no longer needs step "price": MAJOR`, BumpMajor},
		{"when changed", func(t *testing.T, g *Graph) { irFind(t, g, "charge").When = irExpr("input.amount > 0", TypeBool) },
			`step "charge" when changed (none → input.amount > 0): MAJOR`, BumpMajor},
		{"switch changed", func(t *testing.T, g *Graph) {
			irFind(t, g, "route").Action.Switch.Cases[0].When = irExpr("!input.express", TypeBool)
		}, `step "route" switch changed: MAJOR`, BumpMajor},
		{"join changed", func(t *testing.T, g *Graph) { irFind(t, g, "label").Join = "all" },
			`step "label" join changed (any → all): MAJOR`, BumpMajor},
		{"input removed", func(t *testing.T, g *Graph) { g.Inputs = g.Inputs[1:] }, `input "amount" removed: MAJOR`, BumpMajor},
		{"input retyped", func(t *testing.T, g *Graph) { g.Inputs[0].Type = TypeString },
			`input "amount" type changed (number → string): MAJOR`, BumpMajor},
		{"input added without default", func(t *testing.T, g *Graph) { g.Inputs = append(g.Inputs, Input{Name: "zone", Type: TypeString}) },
			`input "zone" added without a default: MAJOR`, BumpMajor},
		{"input default removed", func(t *testing.T, g *Graph) { g.Inputs[1].Default = nil },
			`input "express" default removed (the input is now required): MAJOR`, BumpMajor},
		{"used output type changed", func(t *testing.T, g *Graph) {
			irFind(t, g, "price").OutputType = ObjectOf(map[string]*Type{"total": TypeString})
		}, `step "price" output type changed (object({total = number}) → object({total = string})), and later steps or outputs use it: MAJOR`, BumpMajor},
		{"foreach added", func(t *testing.T, g *Graph) {
			irFind(t, g, "poll").Foreach = &Foreach{Items: irExpr("[1, 2]", ListOf(TypeNumber)), Concurrency: 1, OnFailure: "fail"}
		}, `step "poll" foreach added ([1, 2]): MAJOR`, BumpMajor},
		{"foreach removed", func(t *testing.T, g *Graph) { irFind(t, g, "label").Foreach = nil }, `step "label" foreach removed: MAJOR`, BumpMajor},
		{"foreach items changed", func(t *testing.T, g *Graph) { irFind(t, g, "label").Foreach.Items.CEL = "['box-1']" },
			`step "label" foreach items changed (['box-1', 'box-2'] → ['box-1']): MAJOR`, BumpMajor},
		{"until changed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Until.Cond.CEL = "true" },
			`step "poll" until changed (steps.poll.output.json.state == 'done' → true): MAJOR`, BumpMajor},
		{"until's type changed, its text not", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Until.Cond.Type = TypeAny },
			`step "poll" until changed (steps.poll.output.json.state == 'done': type bool → any): MAJOR`, BumpMajor},
		{"on_error changed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").OnError = "continue" },
			`step "poll" on_error changed (fail → continue): MAJOR`, BumpMajor},
		{"output removed", func(t *testing.T, g *Graph) { g.Outputs = nil }, `output "tracking" removed: MAJOR`, BumpMajor},
		{"workflow renamed", func(t *testing.T, g *Graph) { g.Workflow = "ship" }, `workflow renamed (ship-order → ship): MAJOR`, BumpMajor},

		// MINOR
		{"openapi operation added", func(t *testing.T, g *Graph) {
			irFind(t, g, "charge").Action.HTTP.OpenAPI = &OpenAPIRef{Document: "pay.yaml", SHA256: "aa", Operation: "charge"}
		}, `step "charge" openapi operation added (charge in pay.yaml): MINOR`, BumpMinor},
		{"step added", func(t *testing.T, g *Graph) {
			g.Steps = append(g.Steps, irStep("notify", irHTTP("POST", "http://n"), "label"))
		}, `step "notify" added: MINOR`, BumpMinor},
		{"step added upstream of an existing step", func(t *testing.T, g *Graph) {
			g.Steps = append(g.Steps, irStep("audit", irExec("./audit")))
			s := irFind(t, g, "poll")
			s.Needs = []string{"audit"}
		}, `step "poll" now needs new step "audit": MINOR`, BumpMinor},
		{"action parameters changed", func(t *testing.T, g *Graph) {
			irFind(t, g, "charge").Action.HTTP.URL = irLit("http://127.0.0.1:8081/charge", TypeString)
		}, `step "charge" http parameters changed (url): MINOR`, BumpMinor},
		{"set values changed", func(t *testing.T, g *Graph) {
			irFind(t, g, "price").Action.Set.Values.Put("total", irTmpl("input.amount * 1.3", TypeNumber))
		}, `step "price" set parameters changed (values): MINOR`, BumpMinor},
		{"exec command changed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Action = irExec("./bin/status2") },
			`step "poll" exec parameters changed (command): MINOR`, BumpMinor},
		{"exec pass_env changed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Action.Exec.PassEnv = []string{"AWS_PROFILE"} },
			`step "poll" exec parameters changed (pass_env): MINOR`, BumpMinor},
		{"optional input added", func(t *testing.T, g *Graph) {
			g.Inputs = append(g.Inputs, Input{Name: "zone", Type: TypeString, Default: json.RawMessage(`"eu"`)})
		}, `input "zone" added with a default: MINOR`, BumpMinor},
		{"input default changed", func(t *testing.T, g *Graph) { g.Inputs[1].Default = json.RawMessage(`true`) },
			`input "express" default changed (false → true): MINOR`, BumpMinor},
		{"output added", func(t *testing.T, g *Graph) {
			g.Outputs = append(g.Outputs, Output{Name: "total", Value: irTmpl("steps.price.output.total", TypeNumber), Type: TypeNumber})
		}, `output "total" added: MINOR`, BumpMinor},
		{"output value changed", func(t *testing.T, g *Graph) {
			g.Outputs[0].Value = irTmpl("steps.ship_standard.output.stdout", TypeString)
		}, `output "tracking" value changed: MINOR`, BumpMinor},
		{"idempotency key changed", func(t *testing.T, g *Graph) {
			irFind(t, g, "charge").IdempotencyKey = irText("charge-", "input.order_id")
		},
			`step "charge" idempotency key changed: MINOR`, BumpMinor},
		{"foreach concurrency changed", func(t *testing.T, g *Graph) { irFind(t, g, "label").Foreach.Concurrency = 4 },
			`step "label" foreach concurrency changed (2 → 4): MINOR`, BumpMinor},
		{"foreach on_failure changed", func(t *testing.T, g *Graph) { irFind(t, g, "label").Foreach.OnFailure = "continue" },
			`step "label" foreach on_failure changed (dead_letter → continue): MINOR`, BumpMinor},
		{"until interval changed", func(t *testing.T, g *Graph) { irFind(t, g, "poll").Until.IntervalMS = 60000 },
			`step "poll" until interval changed (30s → 1m): MINOR`, BumpMinor},
		{"run key changed", func(t *testing.T, g *Graph) { g.Key = nil }, `workflow key changed (input.order_id → none): MINOR`, BumpMinor},
		{"depends_on changed, same needs", func(t *testing.T, g *Graph) { irFind(t, g, "route").DependsOn = nil },
			`step "route" depends_on changed ([charge] → []): MINOR`, BumpMinor},
		{"output type widened", func(t *testing.T, g *Graph) {
			s := irFind(t, g, "price")
			s.OutputType = ObjectOf(map[string]*Type{"total": TypeNumber, "tax": TypeNumber})
			s.Action.Set.Values.Put("tax", irTmpl("input.amount * 0.2", TypeNumber))
		}, `step "price" output type widened (object({total = number}) → object({tax = number, total = number})): MINOR`, BumpMinor},

		// PATCH
		{"description changed", func(t *testing.T, g *Graph) { g.Description = "Ship it." }, `workflow description changed: PATCH`, BumpPatch},
		{"timeout changed", func(t *testing.T, g *Graph) { irFind(t, g, "charge").TimeoutMS = 60000 },
			`step "charge" timeout changed (30s → 1m): PATCH`, BumpPatch},
		{"retry changed", func(t *testing.T, g *Graph) { irFind(t, g, "charge").Retry.Attempts = 3 },
			`step "charge" retry changed (attempts 6 → 3): PATCH`, BumpPatch},
		{"retry removed", func(t *testing.T, g *Graph) { irFind(t, g, "charge").Retry = nil }, `step "charge" retry removed: PATCH`, BumpPatch},
		{"breaker reference changed", func(t *testing.T, g *Graph) { irFind(t, g, "charge").Breaker = "" },
			`step "charge" breaker changed (payments → none): PATCH`, BumpPatch},
		{"breaker block changed", func(t *testing.T, g *Graph) { g.Breakers[0].CooldownMS = 90000 },
			`breaker "payments" changed (cooldown 30s → 1m30s): PATCH`, BumpPatch},
		{"breaker on_open changed", func(t *testing.T, g *Graph) { g.Breakers[0].OnOpen = "fail" },
			`breaker "payments" changed (on_open wait → fail): PATCH`, BumpPatch},
		{"concurrency changed", func(t *testing.T, g *Graph) { g.Concurrency.Limit = 2 },
			`concurrency changed (limit 1 → 2): PATCH`, BumpPatch},
		{"alert changed", func(t *testing.T, g *Graph) { g.Alerts[0].On = []string{"failed"} }, `alert "ops" changed: PATCH`, BumpPatch},
		{"alert added", func(t *testing.T, g *Graph) {
			g.Alerts = append(g.Alerts, Alert{Name: "pager", On: []string{"timed_out"}, Action: irHTTP("POST", "http://p")})
		}, `alert "pager" added: PATCH`, BumpPatch},
		{"limits changed", func(t *testing.T, g *Graph) { g.Limits.Attempts = 5000 },
			`limits changed (attempts 1000 → 5000): PATCH`, BumpPatch},
		{"deadline changed", func(t *testing.T, g *Graph) { g.DeadlineMS = 3 * 3600 * 1000 },
			`workflow deadline changed (2h → 3h): PATCH`, BumpPatch},
		{"secret added", func(t *testing.T, g *Graph) { g.Secrets = append(g.Secrets, Secret{Name: "z", Env: "Z"}) },
			`secret "z" added: PATCH`, BumpPatch},
		{"secret env changed", func(t *testing.T, g *Graph) { g.Secrets[0].Env = "OPS_TOKEN" },
			`secret "alert_token" environment variable changed (ALERT_TOKEN → OPS_TOKEN): PATCH`, BumpPatch},

		// none
		{"nothing but the version", func(t *testing.T, g *Graph) { g.Version = "1.4.1" }, "", BumpNone},
		{"same graph built in another order", func(t *testing.T, g *Graph) {
			g.Steps[0], g.Steps[5] = g.Steps[5], g.Steps[0]
			g.Inputs[0], g.Inputs[2] = g.Inputs[2], g.Inputs[0]
		}, "", BumpNone},
	}
	names := map[string]bool{}
	for _, tc := range cases {
		if names[tc.row] {
			t.Fatalf("duplicate row %q", tc.row)
		}
		names[tc.row] = true
		t.Run(tc.row, func(t *testing.T) {
			old := irShip(t)
			g := irShip(t)
			tc.mutate(t, g)
			Seal(g)
			changes := Diff(old, g)
			var got []string
			for _, c := range changes {
				got = append(got, c.String())
			}
			if tc.want == "" && len(changes) != 0 {
				t.Fatalf("want no changes, got:\n%s", strings.Join(got, "\n"))
			}
			if tc.want != "" && !irContains(got, tc.want) {
				t.Fatalf("want change %q, got:\n%s", tc.want, strings.Join(got, "\n"))
			}
			if b := RequiredBump(changes); b != tc.bump {
				t.Fatalf("required bump = %s, want %s; changes:\n%s", b, tc.bump, strings.Join(got, "\n"))
			}
			// A PATCH change never alters a step hash (PATCH upgrades keep
			// every completed step).
			if tc.bump <= BumpPatch {
				for _, s := range old.Steps {
					if n := irMaybe(g, s.Name); n != nil && n.Hash != s.Hash {
						t.Errorf("a %s change altered the hash of step %q", tc.bump, s.Name)
					}
				}
			}
			// Diff is deterministic.
			again := Diff(old, g)
			for i := range again {
				if again[i] != changes[i] {
					t.Fatalf("Diff is not deterministic: %v vs %v", again, changes)
				}
			}
		})
	}
}

func TestDiffSorted(t *testing.T) {
	old, g := irShip(t), irShip(t)
	irDrop(g, "poll")
	irFind(t, g, "charge").TimeoutMS = 1000
	g.Description = "x"
	g.Inputs = g.Inputs[1:]
	Seal(g)
	var got []string
	for _, c := range Diff(old, g) {
		got = append(got, c.String())
	}
	want := []string{
		`input "amount" removed: MAJOR`,
		`step "charge" timeout changed (30s → 1s): PATCH`,
		`step "poll" removed: MAJOR`,
		`workflow description changed: PATCH`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Diff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckBump(t *testing.T) {
	addStep := func(g *Graph) {
		g.Steps = append(g.Steps, irStep("notify", irHTTP("POST", "http://n"), "label"))
	}
	cases := []struct {
		name    string
		version string
		mutate  func(g *Graph)
		reason  BumpReason // 0: accepted
		want    string     // in the error text
	}{
		{"same version same graph", "1.4.0", func(*Graph) {}, 0, ""},
		{"same version different graph", "1.4.0", addStep, BumpSameVersion,
			"workflow \"ship-order\" version 1.4.0 is already stored with a different graph; the changes need a MINOR bump: set version to 1.5.0 or later\n  step \"notify\" added: MINOR"},
		{"declared smaller than required", "1.4.1", addStep, BumpTooSmall,
			"version 1.4.1 declares a PATCH change from 1.4.0, but the changes need MINOR: set version to 1.5.0 or later\n  step \"notify\" added: MINOR"},
		{"declared as required", "1.5.0", addStep, 0, ""},
		{"declared larger than required", "2.0.0", addStep, 0, ""},
		{"lower version", "1.3.9", func(*Graph) {}, BumpLower, "version 1.3.9 is lower than the stored version 1.4.0; versions only go up: set version to 1.4.1 or later"},
		{"major needed", "1.5.0", func(g *Graph) { irDrop(g, "poll") }, BumpTooSmall, "need MAJOR: set version to 2.0.0 or later\n  step \"poll\" removed: MAJOR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, g := irShip(t), irShip(t)
			tc.mutate(g)
			g.Version = tc.version
			Seal(g)
			_, _, err := CheckBump(old, g)
			if tc.reason == 0 {
				if err != nil {
					t.Fatalf("want accepted, got %v", err)
				}
				return
			}
			var be *BumpError
			if !errors.As(err, &be) || be.Reason != tc.reason {
				t.Fatalf("want BumpError reason %d, got %v", tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%s\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
	t.Run("bad version", func(t *testing.T) {
		old, g := irShip(t), irShip(t)
		g.Version = "1.5"
		if _, _, err := CheckBump(old, g); err == nil || !strings.Contains(err.Error(), "expected MAJOR.MINOR.PATCH") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestDiffFieldNames: parameter changes are named as the author writes
// them (duration, not duration_ms).
func TestDiffFieldNames(t *testing.T) {
	old, g := irFull(t), irFull(t)
	irFind(t, g, "approve").Action.Wait.TimeoutMS = 1000
	irFind(t, g, "charge").Action.HTTP.Headers = nil
	Seal(g)
	var got []string
	for _, c := range Diff(old, g) {
		got = append(got, c.String())
	}
	want := []string{
		`step "approve" wait parameters changed (timeout): MINOR`,
		`step "charge" http parameters changed (headers): MINOR`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Diff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiffMS(t *testing.T) {
	for ms, want := range map[int64]string{0: "none", 500: "500ms", 1000: "1s", 1250: "1s250ms", 90000: "1m30s", 5400000: "1h30m", 86400000: "24h"} {
		if got := diffMS(ms); got != want {
			t.Errorf("diffMS(%d) = %q, want %q", ms, got, want)
		}
	}
}

// irDrop removes the named step from g.
func irDrop(g *Graph, name string) {
	out := g.Steps[:0]
	for _, s := range g.Steps {
		if s.Name != name {
			out = append(out, s)
		}
	}
	g.Steps = out
}

func irMaybe(g *Graph, name string) *Step {
	for _, s := range g.Steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func irContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A changed OpenAPI document or operation is a change of its own, even
// when the request compiled from it is the same.
func TestDiffOpenAPI(t *testing.T) {
	ref := func(op, sha string) *OpenAPIRef { return &OpenAPIRef{Document: "pay.yaml", SHA256: sha, Operation: op} }
	for _, tc := range []struct {
		o, n *OpenAPIRef
		want string
	}{
		{ref("charge", "aa11"), ref("charge", "bb22"), `step "charge" openapi document pay.yaml changed (sha256 aa11 → bb22): MINOR`},
		{ref("charge", "aa11"), ref("pay", "aa11"), `step "charge" openapi operation changed (charge in pay.yaml → pay in pay.yaml): MINOR`},
		{ref("charge", "aa11"), nil, `step "charge" openapi operation removed (charge in pay.yaml): MINOR`},
	} {
		old, g := irShip(t), irShip(t)
		irFind(t, old, "charge").Action.HTTP.OpenAPI = tc.o
		irFind(t, g, "charge").Action.HTTP.OpenAPI = tc.n
		var got []string
		for _, c := range Diff(old, g) {
			got = append(got, c.String())
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("changes %q, want only %q", got, tc.want)
		}
	}
}
