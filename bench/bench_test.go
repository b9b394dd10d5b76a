package bench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
)

// TestScenarios runs every scenario that needs no flowrun binary at the
// smallest scale, in this process, and checks that each reports figures
// with their baselines.
func TestScenarios(t *testing.T) {
	for _, s := range Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			r, err := Run(context.Background(), s.Name, Config{Scale: 0.001, Dir: t.TempDir()})
			if errors.Is(err, errNoFlowrun) {
				t.Skip("needs the flowrun binary; cmd/flowrun's bench testscript runs it")
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Figures) == 0 {
				t.Fatalf("%s reported no figures", s.Name)
			}
			for _, f := range r.Figures {
				// A time or a growth of memory may round to zero at this
				// scale; a rate or a size may not.
				if f.Value == 0 && f.Unit != "ms" && !strings.Contains(f.Name, "growth") {
					t.Errorf("%s: figure %q is zero", s.Name, f.Name)
				}
				if f.Baseline == nil || f.Baseline.Value <= 0 {
					t.Errorf("%s: figure %q has no baseline measured", s.Name, f.Name)
				}
				if f.Target != nil && f.Met == nil {
					t.Errorf("%s: figure %q has a target but no verdict", s.Name, f.Name)
				}
			}
			t.Logf("%s: %+v", s.Name, r.Figures)
		})
	}
}

// BenchmarkScenarios runs each in-process scenario at a small scale, once
// per iteration, and reports its figures' ratios to their baselines.
func BenchmarkScenarios(b *testing.B) {
	for _, s := range Scenarios() {
		if s.Name == "apply" {
			continue
		}
		b.Run(s.Name, func(b *testing.B) {
			for b.Loop() {
				r, err := Run(context.Background(), s.Name, Config{Scale: 0.01, Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				for i, f := range r.Figures {
					if f.Baseline != nil {
						b.ReportMetric(f.Ratio, "x-baseline-"+string(rune('a'+i)))
					}
				}
			}
		})
	}
}

// TestStoreChainFitsOneFile: the longest chain store-chain writes at scale
// 1 is a workflow file flowrun accepts (the language's item limit, not
// only the scale, bounds it).
func TestStoreChainFitsOneFile(t *testing.T) {
	sizes := storeChainSizes(Config{Scale: 1})
	n := sizes[len(sizes)-1]
	if _, diags := lang.LoadFile("chain.hcl", []byte(exprChain("chain", n))); diags.HasErrors() {
		t.Fatalf("a store-chain file of %d steps: %s", n, diags.Error())
	}
}

// TestSuiteGoesOnAfterAFailure: a scenario whose child process fails is
// recorded with its error, the next scenarios still run, and the error
// names every failed one.
func TestSuiteGoesOnAfterAFailure(t *testing.T) {
	c := Config{Flowrun: []string{"false"}, Scale: 0.01, Dir: t.TempDir()}
	rep, err := Suite(context.Background(), c, []string{"set-full", "compile"}, nil)
	if err == nil || !strings.Contains(err.Error(), "set-full, compile") {
		t.Fatalf("Suite error = %v, want one naming both failed scenarios", err)
	}
	if rep == nil || len(rep.Failed) != 2 || rep.Failed[0].Scenario != "set-full" || rep.Failed[1].Scenario != "compile" || rep.Failed[1].Error == "" {
		t.Fatalf("report = %+v, want both scenarios failed with their errors", rep)
	}
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil || !strings.Contains(b.String(), "compile: FAILED") {
		t.Errorf("text report = %q, %v; want the failures in it", b.String(), err)
	}
}
