package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// applyPrintScenario measures what apply's progress lines cost outside a
// terminal: `flowrun apply` of a foreach over N set items, its output a
// pipe, against the same apply with --quiet (no progress at all), in
// alternating rounds (best of 3 each). A foreach's items are folded into a
// line a second, so the two should take nearly the same time.
func applyPrintScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	n := c.n(100000, 200)
	r.Sizes["items"] = n
	wf := filepath.Join(dir, "each.hcl")
	src := fmt.Sprintf(`workflow "each" {
  version = "1.0.0"
  input "n" { type = list(number) }
  limits {
    attempts = %d
    parallel = 32
  }
  step "each" {
    foreach {
      items       = "input.n"
      concurrency = 32
    }
    set { v = "{{ item }}" }
  }
}
`, n+10)
	if err := os.WriteFile(wf, []byte(src), 0o600); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`{"n": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", i)
	}
	b.WriteString("]}")
	inputs := filepath.Join(dir, "inputs.json")
	if err := os.WriteFile(inputs, []byte(b.String()), 0o600); err != nil {
		return err
	}
	best := func(quiet bool) (time.Duration, error) {
		var out time.Duration
		for round := range 3 {
			args := []string{"apply", "--no-tui", "--new", "--db", filepath.Join(dir, fmt.Sprintf("p%v%d.db", quiet, round)), wf, "--inputs", inputs}
			if quiet {
				args = append(args, "--quiet")
			}
			d, _, err := runFlowrun(ctx, c, dir, args...)
			if err != nil {
				return 0, err
			}
			if round == 0 || d < out {
				out = d
			}
		}
		return out, nil
	}
	quiet, err := best(true)
	if err != nil {
		return err
	}
	plain, err := best(false)
	if err != nil {
		return err
	}
	r.figure(Figure{Name: fmt.Sprintf("apply of a foreach of %d set items, progress to a pipe", n), Value: ms(plain), Unit: "ms",
		Baseline: &Baseline{Name: "the same with --quiet", Value: ms(quiet), Unit: "ms"},
		Target:   &Target{Of: "ratio", Op: "<=", Limit: 1.05}})
	return nil
}
