package crashtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// catchRaceWorkflow has a step that fails and is caught, whose handler
// writes a side effect once per attempt, and a race between a quick and a
// slow program; each program appends its step key to marks.log.
const catchRaceWorkflow = `workflow "catchrace" {
  version = "1.0.0"
  step "flaky" {
    exec { command = ["sh", "-c", "sleep 0.1; echo flaky >> marks.log; exit 3"] }
    catch {
      when = "has(error.exit_code) && error.exit_code == 3"
      next = [step.handle]
    }
  }
  step "normal" {
    depends_on = [step.flaky]
    exec { command = ["sh", "-c", "echo normal >> marks.log"] }
  }
  step "handle" {
    exec { command = ["sh", "-c", "sleep 0.1; echo handle >> marks.log"] }
  }
  step "quick" {
    depends_on = [step.handle]
    exec { command = ["sh", "-c", "sleep 0.2; echo quick >> marks.log"] }
  }
  step "slow" {
    depends_on = [step.handle]
    exec { command = ["sh", "-c", "sleep 30; echo slow >> marks.log"] }
  }
  step "pick" {
    join       = "first"
    depends_on = [step.quick, step.slow]
    exec { command = ["sh", "-c", "echo pick >> marks.log; echo {{ steps.quick.status }}"] }
  }
}
`

// TestCatchRaceKill: flowrun apply runs a workflow with a caught failure
// and a race, and is SIGKILLed at random instants, then run again until it
// ends. A kill never changes the outcome: the run completes (a caught
// error never also fails it), the step after the caught one is skipped and
// never ran, the race has one winner (the quick step) and the slow loser
// is canceled and never finished, and the step after the race ran once
// per attempt the store recorded.
func TestCatchRaceKill(t *testing.T) {
	needBinary(t)
	kills := int(envInt(t, "FLOWRUN_CATCHRACE_KILLS", 5))
	seed := envInt(t, "FLOWRUN_CRASH_SEED", 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 0xca7c4))
	dir, wf, db := workflowDir(t, "catchrace", catchRaceWorkflow)
	for n := range kills {
		killApply(t, n+1, db, wf, time.Duration(rng.Int64N(int64(450*time.Millisecond))))
	}
	res := flowrun(t, nil, "--db", db, "apply", "--no-tui", wf, "--json")
	got := decodeView(t, res.stdout)
	if res.code != 0 || got.Status != "completed" {
		t.Fatalf("the last apply exited %d with the run %s (error %s), want completed; stderr:\n%s", res.code, got.Status, got.Error, res.stderr)
	}
	want := map[string]string{"flaky": "failed", "normal": "skipped", "handle": "completed", "quick": "completed", "slow": "canceled", "pick": "completed"}
	for name, st := range want {
		if sv := got.Steps[name]; sv == nil || sv.Status != st {
			t.Errorf("step %s is %v, want %s", name, sv, st)
		}
	}
	rdb := openReadOnly(t, db)
	atts := map[string]int{}
	for _, a := range attempts(t, rdb, got.RunID) {
		atts[a.StepKey]++
	}
	raw, err := os.ReadFile(filepath.Join(dir, "marks.log"))
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, l := range strings.Fields(string(raw)) {
		ran[l]++
	}
	if ran["normal"] != 0 || ran["slow"] != 0 {
		t.Errorf("marks.log %q: the dependent of the caught step or the race's loser finished", raw)
	}
	for _, name := range []string{"flaky", "handle", "quick", "pick"} {
		if ran[name] < 1 || ran[name] > atts[name] {
			t.Errorf("step %s ran %d times with %d attempts recorded: marks.log %q", name, ran[name], atts[name], raw)
		}
	}
	caught, picked := 0, 0
	for _, e := range events(t, rdb, got.RunID) {
		switch {
		case e.Kind == "step_caught" && e.StepKey == "flaky":
			caught++
		case e.Kind == "step_completed" && e.StepKey == "pick":
			picked++
		}
	}
	if caught != 1 || picked != 1 {
		t.Errorf("%d step_caught events of flaky and %d completions of pick, want one each", caught, picked)
	}
}

// workflowDir writes a workflow into a new directory and returns the
// directory, the file and the database path beside it.
func workflowDir(t *testing.T, name, src string) (dir, wf, db string) {
	t.Helper()
	dir = t.TempDir()
	wf = filepath.Join(dir, name+".hcl")
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, wf, filepath.Join(dir, name+".db")
}

// killApply runs flowrun apply of wf on db, the n-th of a test, and
// SIGKILLs it after d. It reports whether the kill landed, and otherwise
// the exit code apply ended with.
func killApply(t *testing.T, n int, db, wf string, d time.Duration) (killed bool, code int) {
	t.Helper()
	p := start(t, fmt.Sprintf("apply %d", n), nil, "--db", db, "apply", "--no-tui", wf, "--json")
	sleep(d)
	if ok, _ := p.kill(); !ok {
		t.Logf("apply %d ended (exit %d) before its kill at %s", n, p.exitCode(), d.Round(time.Millisecond))
		return false, p.exitCode()
	}
	p.rest()
	t.Logf("kill %d at %s", n, d.Round(time.Millisecond))
	return true, 0
}
