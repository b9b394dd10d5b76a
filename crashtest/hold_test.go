package crashtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// quickChain is a chain of n exec steps that do nothing but write their
// start and end lines to $CRASH_LOG: a step is mostly its commit and its
// spawn, so a kill at a random instant often lands while the next
// program is held during the commit of its start (spec/semantics.md §12).
func quickChain(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"quick\" {\n  version  = \"1.0.0\"\n  pass_env = [\"CRASH_LOG\"]\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  step \"q%03d\" {\n", i)
		if i > 1 {
			fmt.Fprintf(&b, "    depends_on = [step.q%03d]\n", i-1)
		}
		fmt.Fprintf(&b, "    exec {\n      shell   = true\n      command = \"echo \\\"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\\\" >> \\\"$CRASH_LOG\\\"; echo \\\"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\\\" >> \\\"$CRASH_LOG\\\"; echo %d\"\n    }\n  }\n", i)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestCrashDuringHold SIGKILLs flowrun apply of a chain of quick exec
// steps at random instants, which often fall in a commit of a step's
// start, while that step's program is already created and held. The
// promise checked is that of TestCrashProof: the run completes after the
// kills, every program that wrote a line ran as an attempt the store
// holds, no attempt ran twice, and no two processes worked on the run at
// once. (That a held program never runs when its start does not commit is
// proven in-process, where the commit can be made to fail: interp's
// TestExecNotCommittedNeverRuns. Here a program released too early would
// mostly die with the killed flowrun before writing its line.)
//
// Environment: FLOWRUN_CRASH_SEED (default 1) seeds the kill delays;
// FLOWRUN_HOLD_KILLS (default 15) is how many kills.
func TestCrashDuringHold(t *testing.T) {
	const steps = 400
	needBinary(t)
	seed := envInt(t, "FLOWRUN_CRASH_SEED", 1)
	kills := int(envInt(t, "FLOWRUN_HOLD_KILLS", 15))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x401d))
	dir := t.TempDir()
	wf := filepath.Join(dir, "quick.hcl")
	if err := os.WriteFile(wf, []byte(quickChain(steps)), 0o644); err != nil {
		t.Fatal(err)
	}
	db, log := filepath.Join(dir, "quick.db"), filepath.Join(dir, "quick.log")
	env := []string{"CRASH_LOG=" + log}
	killed := map[int]killing{}
	var last killing
	for n := range kills {
		p := start(t, fmt.Sprintf("apply %d", n+1), env, "--db", db, "apply", wf, "--json")
		// The first progress line comes once the run is claimed; a kill
		// 0-30 ms later lands a few steps further on.
		if !waitLine(t, p, func(line string) bool { return strings.HasPrefix(line, "[") }) {
			t.Fatalf("apply %d ended (exit %d) before its first progress line; stderr:\n%s", n+1, p.exitCode(), p.stderr())
		}
		sleep(time.Duration(rng.Int64N(int64(30*time.Millisecond) + 1)))
		ok, k := p.kill()
		if !ok {
			t.Fatalf("apply %d ended (exit %d) before its kill: the chain finished too soon; stderr:\n%s", n+1, p.exitCode(), p.stderr())
		}
		killed[p.pid()], last = k, k
	}
	res := flowrun(t, env, "--db", db, "apply", wf, "--json")
	if res.code != 0 {
		t.Fatalf("the apply after the kills exited %d; stderr:\n%s", res.code, res.stderr)
	}
	got := decodeView(t, res.stdout)
	if got.Status != "completed" || len(got.Steps) != steps {
		t.Fatalf("run %s is %s with %d steps after the last apply, want completed with %d", got.RunID, got.Status, len(got.Steps), steps)
	}
	// A program of a killed apply that was released just before the kill
	// ends at once (it only writes two lines); give it a moment.
	if wait := last.reaped.Add(500 * time.Millisecond); wall.Now().Before(wait) {
		sleep(wait.Sub(wall.Now()))
	}
	rdb := openReadOnly(t, db)
	atts := attempts(t, rdb, got.RunID)
	marks := readMarks(t, log)
	execSteps := map[string]bool{}
	for name := range got.Steps {
		execSteps[name] = true
	}
	checkAttempts(t, got, atts, marks, execSteps)
	for _, v := range checkExclusive(got.RunID, events(t, rdb, got.RunID), atts, killed) {
		t.Error(v)
	}
	interrupted, notBegun := 0, 0
	for _, a := range atts {
		if a.Status != "interrupted" {
			continue
		}
		interrupted++
		if !slices.Contains(marks[a.Idempotent], mark{a.Attempt, "start"}) {
			notBegun++
		}
	}
	t.Logf("%d kills: %d attempts interrupted, %d of them before their program wrote a line (held, or released a moment before the kill); %d exec steps ran more than once",
		kills, interrupted, notBegun, reran(marks))
}
