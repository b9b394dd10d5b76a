package crashtest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChainCrash: a kill never changes a run's outcome (issue 17;
// spec/semantics.md §12, §14). flowrun apply runs a chain of exec steps
// that needs exactly its limits.attempts (at full size the 1,000-step
// chain at the default cap of 1,000) and is SIGKILLed at random instants,
// then run again; after the last kill it runs the chain to its end. The
// attempts the kills interrupted are given back to the cap, so the run
// completes, every step completed once, and the run used exactly as many
// attempts as it has steps. Before, each interrupted attempt used up the
// cap and the run failed with attempt_cap.
//
// Environment: FLOWRUN_CHAIN_STEPS (default 100; 1000 in scripts/proof,
// where the workflow then has no limits block: the default cap) is the
// length of the chain; FLOWRUN_CHAIN_KILLS (default 4; 10 in
// scripts/proof) how many kills; FLOWRUN_CRASH_SEED (default 1) seeds
// where they land.
func TestChainCrash(t *testing.T) {
	needBinary(t)
	steps := int(envInt(t, "FLOWRUN_CHAIN_STEPS", 100))
	kills := int(envInt(t, "FLOWRUN_CHAIN_KILLS", 4))
	seed := envInt(t, "FLOWRUN_CRASH_SEED", 1)
	// A step sleeps stepSleep; a kill comes up to maxDelay after the
	// progress line it waits for, so it most likely lands while a step
	// runs, and the last kill's target leaves tail steps (at least
	// tail × stepSleep of work) for the run to finish after it.
	const stepSleep, maxDelay, tail = 40 * time.Millisecond, 35 * time.Millisecond, 5
	if steps <= tail+kills {
		t.Fatalf("FLOWRUN_CHAIN_STEPS=%d: want more than %d steps for %d kills", steps, tail+kills, kills)
	}
	t.Logf("%d steps (FLOWRUN_CHAIN_STEPS), %d kills (FLOWRUN_CHAIN_KILLS), seed %d (FLOWRUN_CRASH_SEED)", steps, kills, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc4a17))
	dir := t.TempDir()
	wf := filepath.Join(dir, "chain.hcl")
	if err := os.WriteFile(wf, []byte(chainWorkflow(steps, stepSleep)), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "chain.db")

	targets := make([]int, kills)
	for i := range targets {
		targets[i] = 1 + rng.IntN(steps-tail)
	}
	slices.Sort(targets)
	completed := map[string]bool{}
	killed := map[int]bool{}
	began := wall.Now()
	for n, target := range targets {
		p := start(t, fmt.Sprintf("apply %d", n+1), nil, "--db", db, "apply", "--no-tui", wf, "--json")
		track := func(line string) bool {
			if m := completedLine.FindStringSubmatch(line); m != nil {
				completed[m[1]] = true
			}
			return len(completed) >= target
		}
		if !waitLine(t, p, track) {
			t.Fatalf("apply %d ended (exit %d) with %d steps completed, before kill %d, which waited for %d; stderr:\n%s",
				n+1, p.exitCode(), len(completed), n+1, target, p.stderr())
		}
		d := time.Duration(rng.Int64N(int64(maxDelay) + 1))
		sleep(d)
		ok, _ := p.kill()
		if !ok {
			t.Fatalf("apply %d ended (exit %d) before kill %d: the chain finished first\nstderr:\n%s", n+1, p.exitCode(), n+1, p.stderr())
		}
		for _, line := range p.rest() {
			track(line)
		}
		killed[p.pid()] = true
		t.Logf("kill %2d: at %4d steps completed + %s, pid %d", n+1, target, d.Round(time.Millisecond), p.pid())
	}
	res := flowrun(t, nil, "--db", db, "apply", "--no-tui", wf, "--json")
	t.Logf("%d kills and the last apply: %s", kills, wall.Now().Sub(began).Round(time.Millisecond))
	got := decodeView(t, res.stdout)
	if res.code != 0 || got.Status != "completed" {
		t.Fatalf("the apply after the kills exited %d with the run %s (error %s), want it completed: a kill changed the outcome; stderr:\n%s",
			res.code, got.Status, got.Error, res.stderr)
	}
	if len(got.Steps) != steps {
		t.Fatalf("the run shows %d steps, want %d", len(got.Steps), steps)
	}
	for name, sv := range got.Steps {
		if sv.Status != "completed" {
			t.Errorf("step %s is %s, want completed", name, sv.Status)
		}
	}

	rdb := openReadOnly(t, db)
	byStep := map[string][]attempt{}
	interrupted := 0
	for _, a := range attempts(t, rdb, got.RunID) {
		byStep[a.StepKey] = append(byStep[a.StepKey], a)
	}
	for name := range got.Steps {
		as := byStep[name]
		slices.SortFunc(as, func(a, b attempt) int { return a.Attempt - b.Attempt })
		for i, a := range as {
			last := i == len(as)-1
			switch {
			case last && a.Status != "completed":
				t.Errorf("step %s: its last attempt is %s, want completed", name, a)
			case !last && a.Status != "interrupted":
				t.Errorf("step %s: attempt %s before its last is not interrupted", name, a)
			case !last && !killed[a.ownerPID()]:
				t.Errorf("step %s: attempt %s was interrupted but its owner was not killed by the test", name, a)
			case !last:
				interrupted++
			}
		}
		if len(as) == 0 {
			t.Errorf("step %s has no attempt", name)
		}
	}
	if used := attemptsUsed(t, rdb, got.RunID); used != steps {
		t.Errorf("the run used %d attempts of its limits.attempts, want %d: an interrupted attempt is given back", used, steps)
	}
	t.Logf("%d of %d kills interrupted an attempt", interrupted, kills)
	if interrupted == 0 {
		t.Errorf("no kill landed while an attempt ran, so the test proved little; try another FLOWRUN_CRASH_SEED")
	}
}

// chainWorkflow is a chain of n exec steps, each sleeping d, whose
// limits.attempts is exactly n: the default (no limits block) when n is
// the default cap of 1,000.
func chainWorkflow(n int, d time.Duration) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n")
	if n != 1000 {
		fmt.Fprintf(&b, "  limits { attempts = %d }\n", n)
	}
	for i := range n {
		fmt.Fprintf(&b, "  step \"s%04d\" {\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "    depends_on = [step.s%04d]\n", i-1)
		}
		fmt.Fprintf(&b, "    exec { command = [\"sleep\", \"%g\"] }\n  }\n", d.Seconds())
	}
	b.WriteString("}\n")
	return b.String()
}

// attemptsUsed reads a run's attempts_used: the attempts it used of its
// limits.attempts.
func attemptsUsed(t *testing.T, db *sql.DB, runID string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT attempts_used FROM runs WHERE id = ?`, runID).Scan(&n); err != nil {
		t.Fatalf("reading attempts_used of run %s: %v", runID, err)
	}
	return n
}

// TestPoisonStepCrash: a step that kills the flowrun process running it
// (as a step that runs its worker out of memory does) is not run for
// ever: once its attempts were interrupted 10 times in a row, the next
// apply fails the step, and the run, with kind interrupted (semantics.md
// §6, §12). Before, every apply ran it again and died.
func TestPoisonStepCrash(t *testing.T) {
	const maxInterrupts = 10 // spec/semantics.md §12
	needBinary(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, "poison.hcl")
	src := `workflow "poison" {
  version = "1.0.0"
  step "before" {
    exec { command = ["true"] }
  }
  step "poison" {
    depends_on = [step.before]
    exec { command = ["sh", "-c", "kill -KILL $PPID; sleep 10"] }
  }
  step "after" {
    depends_on = [step.poison]
    set { ok = true }
  }
}
`
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "poison.db")
	var pids []int
	for n := 1; n <= maxInterrupts; n++ {
		p := start(t, fmt.Sprintf("apply %d", n), nil, "--db", db, "apply", "--no-tui", wf, "--json")
		<-p.done
		if p.exitCode() != -1 {
			t.Fatalf("apply %d exited %d, want it killed by its step; stderr:\n%s", n, p.exitCode(), p.stderr())
		}
		pids = append(pids, p.pid())
	}
	res := flowrun(t, nil, "--db", db, "apply", "--no-tui", wf, "--json")
	got := decodeView(t, res.stdout)
	if res.code != 1 || got.Status != "failed" || !strings.Contains(string(got.Error), `"kind":"interrupted"`) && !strings.Contains(string(got.Error), `"kind": "interrupted"`) {
		t.Fatalf("apply %d exited %d with the run %s (error %s), want exit 1 and kind interrupted; stderr:\n%s",
			maxInterrupts+1, res.code, got.Status, got.Error, res.stderr)
	}
	if s := got.Steps["poison"]; s == nil || s.Status != "failed" {
		t.Fatalf("step poison = %+v, want failed", s)
	}
	if s := got.Steps["before"]; s == nil || s.Status != "completed" || s.Attempts != 1 {
		t.Fatalf("step before = %+v, want completed once", s)
	}
	var poison []attempt
	for _, a := range attempts(t, openReadOnly(t, db), got.RunID) {
		if a.StepKey == "poison" {
			poison = append(poison, a)
		}
	}
	if len(poison) != maxInterrupts {
		t.Fatalf("step poison has %d attempts, want %d (none after the last interruption): %v", len(poison), maxInterrupts, poison)
	}
	for i, a := range poison {
		if a.Status != "interrupted" || a.ownerPID() != pids[i] {
			t.Errorf("attempt %s: want interrupted, owned by apply %d (pid %d)", a, i+1, pids[i])
		}
	}
}
