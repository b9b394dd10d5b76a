package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// errNoFlowrun: a scenario that runs the flowrun binary was given no
// command for it.
var errNoFlowrun = errors.New("this scenario runs the flowrun binary, and no command for it was given")

// applyScenario times `flowrun apply` of a 3-step workflow as a process,
// on a new database each time (the first apply also creates the schema)
// and again on the same database with --new, against the wall time of
// `flowrun help` (the process starting and exiting): under 100 ms.
func applyScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	reps := c.n(7, 3)
	r.Sizes["repetitions"] = reps
	file := filepath.Join(dir, "three.hcl")
	if err := os.WriteFile(file, []byte(threeSteps), 0o600); err != nil {
		return fmt.Errorf("writing the workflow: %w", err)
	}
	var help, fresh, again []time.Duration
	var helpRSS, applyRSS int64
	for i := range reps {
		d, rss, err := runFlowrun(ctx, c, dir, "help")
		if err != nil {
			return err
		}
		help, helpRSS = append(help, d), max(helpRSS, rss)
		db := filepath.Join(dir, "db"+strconv.Itoa(i), "flowrun.db")
		d, rss, err = runFlowrun(ctx, c, dir, "apply", "--db", db, file)
		if err != nil {
			return err
		}
		fresh, applyRSS = append(fresh, d), max(applyRSS, rss)
		d, _, err = runFlowrun(ctx, c, dir, "apply", "--db", db, "--new", file)
		if err != nil {
			return err
		}
		again = append(again, d)
	}
	helpB := Baseline{Name: "flowrun help (process start and exit), median", Value: ms(median(help)), Unit: "ms"}
	r.figure(Figure{Name: "apply on a new database, median", Value: ms(median(fresh)), Unit: "ms", Baseline: &helpB,
		Target: &Target{Of: "value", Op: "<=", Limit: 100}})
	r.figure(Figure{Name: "apply --new on an existing database, median", Value: ms(median(again)), Unit: "ms", Baseline: &helpB,
		Target: &Target{Of: "value", Op: "<=", Limit: 100}})
	r.figure(Figure{Name: "apply peak RSS", Value: float64(applyRSS) / 1024, Unit: "MiB",
		Baseline: &Baseline{Name: "flowrun help peak RSS", Value: float64(helpRSS) / 1024, Unit: "MiB"}})
	return nil
}

// runFlowrun runs the flowrun command with args in dir and returns its
// wall time and peak RSS (KiB); it fails unless the command exits 0.
func runFlowrun(ctx context.Context, c Config, dir string, args ...string) (time.Duration, int64, error) {
	cmd := exec.CommandContext(ctx, c.Flowrun[0], append(slices.Clone(c.Flowrun[1:]), args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := now()
	err := cmd.Run()
	d := now().Sub(start)
	if err != nil {
		return 0, 0, fmt.Errorf("flowrun %v: %w\n%s", args, err, out.Bytes())
	}
	return d, maxRSS(cmd.ProcessState), nil
}

// maxRSS is a finished process's peak RSS in KiB.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
