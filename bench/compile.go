package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang"
)

// compileScenario times compiling a chain of N and of N/10 set steps with
// one CEL template each: lang.LoadFile (HCL to graph, type checking) and
// lang.Load (the CEL programs the engine runs, built when a process first
// starts or resumes a run of the version). 10x the steps should take
// within 11x the time; the baseline of each figure is the short chain's.
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
		start = now()
		if _, err := lang.Load(m.Workflows[0].Graph); err != nil {
			return t, fmt.Errorf("loading a chain of %d steps: %w", steps, err)
		}
		t.load = now().Sub(start)
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
		Baseline: &Baseline{Name: "lang.Load of the short chain", Value: ms(s.load), Unit: "ms"},
		Target:   &Target{Of: "ratio", Op: "<=", Limit: 11}})
	return nil
}
