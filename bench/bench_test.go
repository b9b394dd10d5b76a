package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
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
