package interp

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

func TestSequentialSetChain(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "chain" {
  version = "1.0.0"
  input "n" { type = number }
  step "a" {
    set { v = "{{ input.n + 1 }}" }
  }
  step "b" {
    set { v = "{{ steps.a.output.v * 2 }}" }
  }
  step "c" {
    set {
      v = "{{ steps.b.output.v + 1 }}"
      s = "n={{ steps.b.output.v }}"
    }
  }
  output "v" { value = "{{ steps.c.output.v }}" }
  output "s" { value = "{{ steps.c.output.s }}" }
}`, map[string]any{"n": 2})
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"v": 7, "s": "n=6"}`)
	v := b.show(run.ID)
	if v.Steps["a"].Status != store.StepCompleted || v.Steps["c"].Attempts != 1 {
		t.Fatalf("steps = %+v", v.Steps)
	}
	// One claim, one commit for the whole chain (set steps are instant).
	if got := b.eventKinds(run.ID); !strings.Contains(got, "claimed step_completed:a step_completed:b step_completed:c run_completed") {
		t.Fatalf("events = %s", got)
	}
}

func TestInputsValidation(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "in" {
  version = "1.0.0"
  input "name" { type = string }
  input "n" {
    type    = number
    default = 3
  }
  step "a" {
    set { v = "{{ input.name }}" }
  }
}`)
	cases := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{}, `"name": is required`},
		{map[string]any{"name": "x", "bogus": 1}, `"bogus": is not declared`},
		{map[string]any{"name": 5}, `"name": name must be a string, got a number`},
		{map[string]any{"name": "x", "n": "abc"}, `n must be a number, got a string`},
	}
	for _, c := range cases {
		_, _, err := b.e.StartRun(b.ctx, StartParams{Workflow: "in", Inputs: c.in})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("inputs %v: err = %v, want InputError containing %q", c.in, err, c.want)
		}
	}
	// A string for a number input is parsed; the default applies.
	run, created, err := b.e.StartRun(b.ctx, StartParams{Workflow: "in", Inputs: map[string]any{"name": "x", "n": "4"}})
	if err != nil || !created {
		t.Fatalf("start: %v %v", created, err)
	}
	wantJSON(t, "inputs", run.Inputs, `{"name": "x", "n": 4}`)
	// The same inputs find the same run (resume), a completed one is not re-run.
	again, created, err := b.e.StartRun(b.ctx, StartParams{Workflow: "in", Inputs: map[string]any{"name": "x", "n": 4}})
	if err != nil || created || again.ID != run.ID {
		t.Fatalf("second start = %s created=%v err=%v, want the first run", again.ID, created, err)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	again, created, _ = b.e.StartRun(b.ctx, StartParams{Workflow: "in", Inputs: map[string]any{"name": "x", "n": 4}})
	if created || again.ID != run.ID {
		t.Fatalf("completed run was started again")
	}
	fresh, created, _ := b.e.StartRun(b.ctx, StartParams{Workflow: "in", Inputs: map[string]any{"name": "x", "n": 4}, New: true})
	if !created || fresh.ID == run.ID {
		t.Fatalf("New did not start a new run")
	}
}

func TestParallelFanOutFanIn(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "fan" {
  version = "1.0.0"
  step "root" {
    set { v = 1 }
  }
  step "a" {
    depends_on = [step.root]
    exec { command = ["sh", "-c", "echo a"] }
  }
  step "b" {
    depends_on = [step.root]
    exec { command = ["sh", "-c", "echo b"] }
  }
  step "c" {
    depends_on = [step.root]
    exec { command = ["sh", "-c", "echo c"] }
  }
  step "join" {
    set { all = "{{ steps.a.output.stdout + steps.b.output.stdout + steps.c.output.stdout }}" }
  }
  output "all" { value = "{{ steps.join.output.all }}" }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"all": "a\nb\nc\n"}`)
}

func TestWhenSkipPropagationAndJoinAny(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "skip" {
  version = "1.0.0"
  input "go" { type = bool }
  step "maybe" {
    when = "input.go"
    set { v = 1 }
  }
  step "after" {
    set { v = "{{ steps.maybe.output.v }}" }
  }
  step "other" {
    set { v = 2 }
  }
  step "any" {
    depends_on = [step.after, step.other]
    join = "any"
    set { v = "{{ steps.after.status }}" }
  }
  output "any" { value = "{{ steps.any.output.v }}" }
}`, map[string]any{"go": false})
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	if v.Steps["maybe"].Status != store.StepSkipped || v.Steps["after"].Status != store.StepSkipped {
		t.Fatalf("maybe=%s after=%s, want skipped", v.Steps["maybe"].Status, v.Steps["after"].Status)
	}
	wantJSON(t, "outputs", run.Outputs, `{"any": "skipped"}`)
}

func TestSwitch(t *testing.T) {
	src := `
workflow "sw" {
  version = "1.0.0"
  input "express" { type = bool }
  step "route" {
    switch {
      case {
        when = "input.express"
        next = [step.fast]
      }
      default = [step.slow]
    }
  }
  step "fast" {
    set { v = "fast" }
  }
  step "slow" {
    set { v = "slow" }
  }
  step "done" {
    depends_on = [step.fast, step.slow]
    join = "any"
    set { branch = "{{ steps.route.output }}" }
  }
  output "branch" { value = "{{ steps.done.output.branch }}" }
}`
	for _, c := range []struct {
		express      bool
		ran, skipped string
		branch       string
	}{{true, "fast", "slow", "case0"}, {false, "slow", "fast", "default"}} {
		b := setup(t)
		run := b.run(src, map[string]any{"express": c.express})
		wantStatus(t, run, store.RunCompleted)
		v := b.show(run.ID)
		if v.Steps[c.ran].Status != store.StepCompleted || v.Steps[c.skipped].Status != store.StepSkipped {
			t.Fatalf("express=%v: %s=%s %s=%s", c.express, c.ran, v.Steps[c.ran].Status, c.skipped, v.Steps[c.skipped].Status)
		}
		wantJSON(t, "outputs", run.Outputs, `{"branch": "`+c.branch+`"}`)
	}
}

func TestFailStepAndOnErrorContinue(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "f" {
  version = "1.0.0"
  step "bad" {
    on_error = "continue"
    exec { command = ["sh", "-c", "echo oops >&2; exit 3"] }
  }
  step "after" {
    set {
      st   = "{{ steps.bad.status }}"
      code = "{{ steps.bad.error.exit_code }}"
    }
  }
  step "stop" {
    depends_on = [step.after]
    fail { message = "stopped after {{ steps.after.output.st }}" }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	wantJSON(t, "error", run.Error, `{"kind": "fail", "message": "stopped after failed", "step": "stop", "type": "urn:flowrun:error:fail"}`)
	v := b.show(run.ID)
	wantJSON(t, "after", v.Steps["after"].Output, `{"st": "failed", "code": 3}`)
	if k := errKind(t, v.Steps["bad"].Error); k != "exec" {
		t.Fatalf("bad error kind = %s", k)
	}
}
