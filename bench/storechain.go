package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// storeChainScenario measures compiling and storing chains of N/10 and N
// set steps with a {{ }} template in every step (exprChain), each by
// `flowrun apply --detach` in a process of its own, against the floor of
// any compiler built on hcl/v2: hclsyntax parsing the same file alone, in
// a flowrun process of its own too (bench --parse-floor), measured in the
// same run. Compiling and storing should peak at most 1.2x the floor's RSS
// in at most 2x its time.
func storeChainScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	for _, steps := range storeChainSizes(c) {
		file := filepath.Join(dir, "chain"+strconv.Itoa(steps)+".hcl")
		if err := os.WriteFile(file, []byte(exprChain("chain", steps)), 0o600); err != nil {
			return fmt.Errorf("writing the chain: %w", err)
		}
		floorTook, floorRSS, err := parseFloorProcess(ctx, c, dir, file)
		if err != nil {
			return err
		}
		db := filepath.Join(dir, "db"+strconv.Itoa(steps), "flowrun.db")
		took, rss, err := runFlowrun(ctx, c, dir, "apply", "--detach", "--max-file-size", "1GiB", "--db", db, file)
		if err != nil {
			return err
		}
		label := strconv.Itoa(steps) + " steps"
		r.Sizes["steps_"+strconv.Itoa(steps)] = steps
		r.figure(Figure{Name: "apply --detach of a template chain of " + label + ": peak RSS", Value: float64(rss) / 1024, Unit: "MiB",
			Baseline: &Baseline{Name: "hclsyntax parsing the file alone: peak RSS", Value: float64(floorRSS) / 1024, Unit: "MiB"},
			Target:   &Target{Of: "ratio", Op: "<=", Limit: 1.2}})
		r.figure(Figure{Name: "apply --detach of a template chain of " + label + ": wall time", Value: ms(took), Unit: "ms",
			Baseline: &Baseline{Name: "hclsyntax parsing the file alone: wall time", Value: ms(floorTook), Unit: "ms"},
			Target:   &Target{Of: "ratio", Op: "<=", Limit: 2}})
	}
	return nil
}

// storeChainSizes are the lengths of the store-chain scenario's chains:
// N/10 and N steps, N being the longest chain one workflow file may hold
// (a template chain of 20,000 steps is about 100,000 items, lang.MaxItems
// allows 110,000) at scale 1.
func storeChainSizes(c Config) []int {
	n := c.n(20000, 200)
	return []int{max(20, n/10), n}
}

// parseFloorProcess runs `flowrun bench --parse-floor FILE` and returns the
// wall time and peak RSS (KiB) of that process.
func parseFloorProcess(ctx context.Context, c Config, dir, file string) (time.Duration, int64, error) {
	return runFlowrun(ctx, c, dir, "bench", "--parse-floor", file)
}

// ParseFloor parses a workflow file with hclsyntax alone, the floor of any
// compiler built on hcl/v2, and keeps the syntax tree until it returns, so
// that the process's peak RSS is that of holding it.
func ParseFloor(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("parse floor: %w", err)
	}
	f, diags := hclsyntax.ParseConfig(src, path, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return fmt.Errorf("parse floor: %s", diags.Error())
	}
	runtime.KeepAlive(f)
	return nil
}
