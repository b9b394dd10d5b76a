package crashtest

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// completedLine matches apply's progress line for a completed step.
var completedLine = regexp.MustCompile(`^\[[^\]]*\] step (\S+) completed\b`)

// TestCrashProof is the promise of spec/semantics.md §12 as a test (issue
// #3, item 6). flowrun apply runs the 30-step workflow testdata/crash30.hcl
// and is SIGKILLed at random instants, during steps and between them; apply
// is run again after each kill, and after the last one it runs the workflow
// to its end. Then:
//
//   - the run completed, with the outputs and step outputs of an
//     uninterrupted run on another database;
//   - every step ran: each exec step's completed attempt wrote its start and
//     end lines, each set step was recorded exactly once;
//   - a step ran more than once only when a kill landed while it ran: every
//     execution but the last belongs to an attempt that was closed
//     interrupted, owned by an apply process the test killed, closed after
//     the kill; no attempt ran twice;
//   - nothing is left running, and no two processes worked on the run at once.
//
// Environment: FLOWRUN_CRASH_SEED (default 1) seeds the kill schedule;
// FLOWRUN_CRASH_KILLS (default 20) is how many kills; FLOWRUN_CRASH_MAX_DELAY
// (default 150ms, under the shortest exec step's sleep) is the longest
// random delay of a kill after the progress it waits for.
func TestCrashProof(t *testing.T) {
	// A kill waits for at most lastTarget of the 30 steps to complete; the
	// steps after s23 hold three rounds of exec work (at least 0.45 s), far
	// more than FLOWRUN_CRASH_MAX_DELAY, so the run cannot finish before
	// the kill even on a loaded machine.
	const lastTarget = 23
	needBinary(t)
	seed := envInt(t, "FLOWRUN_CRASH_SEED", 1)
	kills := int(envInt(t, "FLOWRUN_CRASH_KILLS", 20))
	maxDelay := envDuration(t, "FLOWRUN_CRASH_MAX_DELAY", 150*time.Millisecond)
	t.Logf("seed %d (FLOWRUN_CRASH_SEED), %d kills (FLOWRUN_CRASH_KILLS), delays up to %s (FLOWRUN_CRASH_MAX_DELAY)", seed, kills, maxDelay)
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc4a54))
	wf := testdataPath(t, "crash30.hcl")
	dir := t.TempDir()

	// The uninterrupted run, on its own database.
	cleanDB, cleanLog := filepath.Join(dir, "clean.db"), filepath.Join(dir, "clean.log")
	began := wall.Now()
	res := flowrun(t, []string{"CRASH_LOG=" + cleanLog}, "--db", cleanDB, "apply", wf, "--json")
	if res.code != 0 {
		t.Fatalf("the uninterrupted apply exited %d; stderr:\n%s", res.code, res.stderr)
	}
	clean := decodeView(t, res.stdout)
	t.Logf("uninterrupted run: %s", wall.Now().Sub(began).Round(time.Millisecond))
	execSteps := map[string]bool{}
	for key, ms := range readMarks(t, cleanLog) {
		step, ok := strings.CutPrefix(key, clean.RunID+"/")
		if !ok {
			t.Fatalf("uninterrupted run: the log has lines of %s, not of run %s", key, clean.RunID)
		}
		execSteps[step] = true
		if len(ms) != 2 || ms[0] != (mark{1, "start"}) || ms[1] != (mark{1, "end"}) {
			t.Errorf("uninterrupted run: step %s wrote %v, want one start and one end of attempt 1", step, ms)
		}
	}
	if len(execSteps) != 20 || len(clean.Steps) != 30 {
		t.Fatalf("uninterrupted run: %d exec steps wrote their lines and %d steps are shown, want 20 of 30", len(execSteps), len(clean.Steps))
	}

	// The killed applies, then one that runs to the end. Kill n waits until
	// target[n] steps have completed (counted from the progress lines of
	// all the applies), so the kills spread over the whole run whatever the
	// machine's pace, then kills at once (just after a commit) or after a
	// random delay (most likely while a step runs).
	db, log := filepath.Join(dir, "crash.db"), filepath.Join(dir, "crash.log")
	env := []string{"CRASH_LOG=" + log}
	targets := make([]int, kills)
	for i := range targets {
		targets[i] = rng.IntN(lastTarget + 1)
	}
	slices.Sort(targets)
	completed := map[string]bool{}
	killed := map[int]killing{}
	type kill struct {
		how string
		pid int
		k   killing
	}
	var done []kill
	began = wall.Now()
	for n, target := range targets {
		p := start(t, fmt.Sprintf("apply %d", n+1), env, "--db", db, "apply", wf, "--json")
		claimed := false
		track := func(line string) bool {
			if m := completedLine.FindStringSubmatch(line); m != nil {
				completed[m[1]] = true
			}
			claimed = claimed || strings.HasPrefix(line, "[")
			return claimed && len(completed) >= target
		}
		reached := waitLine(t, p, track)
		if !reached {
			t.Fatalf("apply %d ended (exit %d) with %d steps completed, before kill %d, which waited for %d; stderr:\n%s\n(the test reads progress lines such as \"[12:00:01] step s01 completed\")",
				n+1, p.exitCode(), len(completed), n+1, target, p.stderr())
		}
		how := fmt.Sprintf("at %2d steps completed", len(completed))
		if rng.IntN(3) != 0 {
			d := time.Duration(rng.Int64N(int64(maxDelay) + 1))
			how += fmt.Sprintf(" + %s", d.Round(time.Millisecond))
			sleep(d)
		}
		ok, k := p.kill()
		if !ok {
			t.Fatalf("apply %d ended (exit %d) before kill %d (%s): the run finished before all the kills; lower FLOWRUN_CRASH_MAX_DELAY\nstderr:\n%s", n+1, p.exitCode(), n+1, how, p.stderr())
		}
		for _, line := range p.rest() {
			track(line) // what it printed between the target and the kill
		}
		killed[p.pid()] = k
		done = append(done, kill{how, p.pid(), k})
	}
	res = flowrun(t, env, "--db", db, "apply", wf, "--json")
	if res.code != 0 {
		t.Fatalf("the apply after the kills exited %d; stderr:\n%s", res.code, res.stderr)
	}
	t.Logf("%d kills and the last apply: %s", kills, wall.Now().Sub(began).Round(time.Millisecond))
	got := decodeView(t, res.stdout)

	// The run completed with the uninterrupted run's outputs.
	if got.Status != "completed" {
		t.Fatalf("run %s is %s after the last apply, want completed; error %s", got.RunID, got.Status, got.Error)
	}
	if !sameJSON(got.Outputs, clean.Outputs) {
		t.Errorf("outputs = %s, want the uninterrupted run's %s", got.Outputs, clean.Outputs)
	}
	for name, cs := range clean.Steps {
		gs := got.Steps[name]
		switch {
		case gs == nil:
			t.Errorf("step %s is missing from the run", name)
		case gs.Status != "completed":
			t.Errorf("step %s is %s, want completed", name, gs.Status)
		case !sameJSON(gs.Output, cs.Output):
			t.Errorf("step %s output = %s, want the uninterrupted run's %s", name, gs.Output, cs.Output)
		}
	}
	shown := flowrun(t, nil, "--db", db, "show", got.RunID, "--json")
	if shown.code != 0 {
		t.Fatalf("show --json exited %d; stderr:\n%s", shown.code, shown.stderr)
	}
	for name, sv := range decodeView(t, shown.stdout).Steps {
		if sv.Status != "completed" {
			t.Errorf("show --json: step %s is %s, want completed (nothing may be left running)", name, sv.Status)
		}
	}
	runs := flowrun(t, nil, "--db", db, "runs", "--json", "--limit", "0")
	if n := strings.Count(runs.stdout, `"run_id"`); runs.code != 0 || n != 1 {
		t.Errorf("runs --json (exit %d) lists %d runs, want the one run resumed after every kill:\n%s", runs.code, n, runs.stdout)
	}

	// Every orphan exec child of a killed apply ends within its step's
	// sleep (at most 0.25 s); wait for them before reading the log.
	if len(done) > 0 {
		if last := done[len(done)-1].k.reaped.Add(time.Second); wall.Now().Before(last) {
			sleep(last.Sub(wall.Now()))
		}
	}
	rdb := openReadOnly(t, db)
	atts := attempts(t, rdb, got.RunID)
	marks := readMarks(t, log)
	checkAttempts(t, got, atts, marks, execSteps)
	for _, v := range checkExclusive(got.RunID, events(t, rdb, got.RunID), atts, killed) {
		t.Error(v)
	}
	for _, a := range attempts(t, rdb, "") {
		if a.Status == "running" {
			t.Errorf("attempt %s is left running", a)
		}
	}

	// Where the kills landed: during a step when the killed process's
	// attempt was closed interrupted, else between steps.
	during, notBegun := 0, 0
	for i, k := range done {
		var hit []string
		for _, a := range atts {
			if a.Status == "interrupted" && a.ownerPID() == k.pid {
				h := fmt.Sprintf("%s#%d", a.StepKey, a.Attempt)
				if !slices.Contains(marks[a.Idempotent], mark{a.Attempt, "start"}) {
					h += " (before its action began)"
					notBegun++
				}
				hit = append(hit, h)
			}
		}
		where := "no attempt in flight"
		if len(hit) > 0 {
			during++
			where = "during " + strings.Join(hit, ", ")
		}
		t.Logf("kill %2d: %-33s pid %d, %s", i+1, k.how, k.pid, where)
	}
	t.Logf("%d kills landed while attempts ran, %d with none in flight; %d interrupted attempts had not begun their action; %d exec steps ran more than once",
		during, len(done)-during, notBegun, reran(marks))
	if n := orphanOverlaps(readLines(t, log)); n > 0 {
		t.Logf("%d times an exec child of a killed apply was still running when the step's next attempt began (SIGKILL does not reach the action's process group; the idempotency key is what makes this safe)", n)
	}
	if during == 0 {
		t.Errorf("no kill landed while an attempt ran, so the proof proved little: raise FLOWRUN_CRASH_MAX_DELAY or try another FLOWRUN_CRASH_SEED")
	}
}

// checkAttempts checks each step of the run against the promise: exec
// steps with checkExecutions, set steps recorded exactly once, and the
// attempt counts that show --json prints agree with the store.
func checkAttempts(t *testing.T, v *runView, atts []attempt, marks map[string][]mark, execSteps map[string]bool) {
	t.Helper()
	byStep := map[string][]attempt{}
	for _, a := range atts {
		byStep[a.StepKey] = append(byStep[a.StepKey], a)
	}
	for key := range marks {
		if step, ok := strings.CutPrefix(key, v.RunID+"/"); !ok || !execSteps[step] {
			t.Errorf("the log has lines of %s, which is not an exec step of run %s", key, v.RunID)
		}
	}
	for name, sv := range v.Steps {
		as := byStep[name]
		if !execSteps[name] {
			if sv.Attempts != 1 || len(as) != 0 {
				t.Errorf("set step %s shows %d attempts and has %d attempt rows, want it recorded exactly once", name, sv.Attempts, len(as))
			}
			continue
		}
		for _, v := range checkExecutions(v.RunID+"/"+name, as, marks[v.RunID+"/"+name]) {
			t.Error(v)
		}
		if sv.Attempts != len(as) {
			t.Errorf("step %s shows %d attempts, the store holds %d", name, sv.Attempts, len(as))
		}
	}
}
