package testrun

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store/sqlite"
)

// chain is a workflow of n steps in a row, each sleeping an hour when
// sleep is set and doing nothing otherwise (a join point).
func chain(n int, sleep bool) string {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "    depends_on = [step.s%d]\n", i-1)
		}
		if sleep {
			b.WriteString("    sleep { duration = \"1h\" }\n")
		}
		b.WriteString("  }\n")
	}
	fmt.Fprintf(&b, "  output \"last\" { value = \"{{ steps.s%d.status }}\" }\n}\n", n-1)
	return b.String()
}

const chainTest = `test "chain" {
  expect {
    status  = "completed"
    outputs = { last = "completed" }
  }
}`

// applyReal runs the chain without sleeps as flowrun apply does: an
// engine on a real clock and a new SQLite file, Drive until it ends. It
// returns the wall time and the process CPU time it took.
func applyReal(tb testing.TB, n int) (time.Duration, time.Duration) {
	tb.Helper()
	ctx := context.Background()
	mod, diags := lang.LoadFile("chain.hcl", []byte(chain(n, false)))
	if diags.HasErrors() {
		tb.Fatal(diags.Error())
	}
	began, cpu0 := time.Now(), processCPU()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "apply.db"), sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	eng := interp.New(st, interp.Options{Clock: clock.Real{}})
	if _, err := eng.StoreGraph(ctx, mod.Workflows[0].Graph); err != nil {
		tb.Fatal(err)
	}
	run, _, err := eng.StartRun(ctx, interp.StartParams{Workflow: "chain", Inputs: map[string]any{}})
	if err != nil {
		tb.Fatal(err)
	}
	got, err := eng.Drive(ctx, run.ID)
	if err != nil || got.Status != "completed" {
		tb.Fatalf("apply: %v %s", err, got.Status)
	}
	return time.Since(began), processCPU() - cpu0
}

// benchChain times a test of the sleeping chain (with crash replays when
// crash is set) against apply of the same chain without its sleeps on a
// real clock, in the same run: ns/op is the test, ratio the test's wall
// time over apply's, cpu-ratio the same for CPU time (on a loaded machine
// the wall times say little).
func benchChain(b *testing.B, n int, crash bool) {
	f, gs, dir := load(b, chain(n, true), chainTest)
	var test, apply, cpu, applyCPU time.Duration
	for i := 0; i < b.N; i++ {
		began, cpu0 := time.Now(), processCPU()
		res := Run(context.Background(), f.Tests[0], Options{Crash: crash, Workflows: gs, WorkDir: dir})
		test += time.Since(began)
		cpu += processCPU() - cpu0
		if !res.Pass {
			b.Fatalf("the chain test failed: %+v", res.Failures)
		}
		if crash && res.Replays < n {
			b.Fatalf("%d crash replays for %d steps", res.Replays, n)
		}
		b.StopTimer()
		w, c := applyReal(b, n)
		apply += w
		applyCPU += c
		b.StartTimer()
	}
	b.ReportMetric(float64(test)/float64(b.N)/1e9, "test-s/op")
	b.ReportMetric(float64(apply)/float64(b.N)/1e9, "apply-s/op")
	b.ReportMetric(float64(cpu)/float64(b.N)/1e9, "test-cpu-s/op")
	b.ReportMetric(float64(applyCPU)/float64(b.N)/1e9, "apply-cpu-s/op")
	b.ReportMetric(float64(test)/float64(apply), "ratio")
	b.ReportMetric(float64(cpu)/float64(applyCPU), "cpu-ratio")
}

// processCPU is the CPU time (user and system) the process used so far:
// on a machine shared with other work the wall time says little.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSleepChain1000: a test of a 1,000-step workflow with an hour's
// sleep in every step (the target: under 1 s).
func BenchmarkSleepChain1000(b *testing.B) { benchChain(b, 1000, false) }

// BenchmarkCrashChain100: --crash on a 100-step sleeping chain, one replay
// per commit point (the target: under 5 s).
func BenchmarkCrashChain100(b *testing.B) { benchChain(b, 100, true) }

// TestChainCrashReplays: a chain of ten steps sleeping an hour each ends
// completed on virtual time (a real clock would take ten hours), and its
// crash replays reach every commit point: a sleep's start and its end are
// commits of their own, so there are at least as many as steps.
func TestChainCrashReplays(t *testing.T) {
	f, gs, dir := load(t, chain(10, true), chainTest)
	res := Run(context.Background(), f.Tests[0], Options{Crash: true, Workflows: gs, WorkDir: dir})
	if !res.Pass {
		t.Fatalf("failures: %+v", res.Failures)
	}
	if res.Replays < 10 {
		t.Fatalf("%d crash replays for 10 sleeping steps: a commit point was missed", res.Replays)
	}
}
