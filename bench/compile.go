package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
)

// compileScenario times compiling a chain of N and of N/10 set steps with
// one CEL template each: lang.LoadFile (HCL to graph, type checking) and
// lang.Load (the index of the CEL expressions the engine compiles on first
// use, built when a process first starts or resumes a run of the
// version). The baseline of each figure is the short chain's. LoadFile of
// 10x the steps should take within 11x the time. lang.Load's figure has no
// target: it takes a third of a millisecond for the long chain, and at
// that size its per-step cost rises by a sixth (12–13x for 10x the steps,
// also as the best of many loads): a profile shows the walk of the larger
// graph and the collector's scan of it costing more per step, not work
// that grows faster than the steps. It is timed as the median of
// loadRepeats loads.
// loadRepeats is how many times the scenario times lang.Load of a chain.
const loadRepeats = 9

func compileScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(1000, 20)
	short := max(2, n/10)
	r.Sizes["steps_short"], r.Sizes["steps_long"] = short, n
	type took struct{ file, load time.Duration }
	compile := func(steps int) (took, error) {
		src := []byte(exprChain("chain", steps))
		var t took
		start := now()
		m, diags := lang.LoadFile("chain.hcl", src)
		t.file = now().Sub(start)
		if diags.HasErrors() {
			return t, fmt.Errorf("compiling a chain of %d steps: %s", steps, diags.Error())
		}
		// lang.Load takes about a millisecond for the long chain: one timing
		// is mostly noise on a shared machine, so the median of several.
		loads := make([]time.Duration, loadRepeats)
		for i := range loads {
			start = now()
			if _, err := expr.Load(m.Workflows[0].Graph); err != nil {
				return t, fmt.Errorf("loading a chain of %d steps: %w", steps, err)
			}
			loads[i] = now().Sub(start)
		}
		slices.Sort(loads)
		t.load = loads[len(loads)/2]
		return t, ctx.Err()
	}
	s, err := compile(short)
	if err != nil {
		return err
	}
	l, err := compile(n)
	if err != nil {
		return err
	}
	r.figure(Figure{Name: "lang.LoadFile of the long chain", Value: ms(l.file), Unit: "ms",
		Baseline: &Baseline{Name: "lang.LoadFile of the short chain", Value: ms(s.file), Unit: "ms"},
		Target:   &Target{Of: "ratio", Op: "<=", Limit: 11}})
	r.figure(Figure{Name: "lang.Load (CEL programs) of the long chain", Value: ms(l.load), Unit: "ms",
		Baseline: &Baseline{Name: "lang.Load of the short chain", Value: ms(s.load), Unit: "ms"}})
	return nil
}
