package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/flowrun/flowrun/bench"
)

func benchCommand() *command {
	return &command{
		name:  "bench",
		args:  "[--scale F] [--scenario NAME,...] [--json]",
		short: "measure flowrun on this machine against raw SQLite (scratch databases only)",
		long: `Bench runs flowrun's performance scenarios on scratch databases in a
temporary directory (never the --db database) and prints each figure with a
raw-SQLite baseline measured in the same process, their ratio, and the
target it should meet: sequential set steps (FULL and NORMAL), sequential
exec steps, 1,000 runs on one worker, a foreach over 10,000 items, resuming
a 10,000-step run, the memory of a 100,000-attempt run, the memory of a
foreach of 1,000,000 set items against one of 100,000, runs and show on a
store of 100,000 runs, apply's wall time, apply of 1,000 sequential http
and exec steps against their physical floors (one round trip or spawn and
one commit per step) measured beside them, apply's peak RSS for 100 and
1,000 steps, flowrun serve's API (a batch start of 10,000 runs, single
start requests) and its web dashboard (pages on a store of 100,000 runs, a
commit reaching an open page). Each scenario runs in a child
process of its own, so its peak RSS is its own.

--scale 1 (the default) uses the sizes the targets are set for and takes
minutes; --scale 0.1 is a quick look. Scenarios: ` + strings.Join(bench.Names(), ", ") + `.`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			scale := fs.Float64("scale", 1, "multiply every size by this (1: the sizes of the targets)")
			scenarios := fs.String("scenario", "", "run only these scenarios, comma-separated")
			asJSON := fs.Bool("json", false, "print the report as one JSON object")
			dir := fs.String("dir", "", "the scratch directory (default: a new temporary directory, removed at the end)")
			pg := fs.String("pg", "", "a postgres:// URL of a database where the Postgres scenarios work, each in a schema of its own that it drops (default: they are skipped)")
			childMode := fs.Bool("child", false, "internal: run one scenario in this process and print its result as JSON")
			parseFloor := fs.String("parse-floor", "", "internal: parse this file with hclsyntax alone (the floor of the store-chain scenario)")
			serveCounter := fs.Bool("serve-counter", false, "internal: serve the http floor scenario's loopback server until standard input ends, its URL printed first")
			return func(ctx context.Context, args []string) error {
				if *serveCounter {
					return bench.ServeCounter(e.stdin, e.stdout)
				}
				if *parseFloor != "" {
					return bench.ParseFloor(*parseFloor)
				}
				if len(args) > 0 {
					return usageErrorf("bench takes no arguments, got %q", args[0]).hint("Choose scenarios with --scenario NAME,NAME.")
				}
				if *scale <= 0 || *scale > 100 {
					return usageErrorf("--scale must be more than 0 and at most 100, got %g", *scale).hint("Use --scale 1 for the full sizes or --scale 0.1 for a quick run.")
				}
				var names []string
				for _, n := range strings.Split(*scenarios, ",") {
					if n = strings.TrimSpace(n); n == "" {
						continue
					}
					if bench.Lookup(n) == nil {
						return usageErrorf("there is no scenario %q", n).hint("Choose among: " + strings.Join(bench.Names(), ", ") + ".")
					}
					names = append(names, n)
				}
				self, err := os.Executable()
				if err != nil {
					return fmt.Errorf("cannot find the flowrun program to run the scenarios in child processes: %w", err)
				}
				cfg := bench.Config{Scale: *scale, Dir: *dir, Flowrun: []string{self}, Postgres: *pg}
				if cfg.Dir == "" {
					tmp, err := os.MkdirTemp("", "flowrun-bench-")
					if err != nil {
						return fmt.Errorf("cannot make a scratch directory for the benchmark: %w", err)
					}
					defer os.RemoveAll(tmp)
					cfg.Dir = tmp
				} else if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
					return fmt.Errorf("cannot make the scratch directory %s: %w", cfg.Dir, err)
				}
				if *childMode {
					if len(names) != 1 {
						return usageErrorf("bench --child runs exactly one scenario, got %d", len(names)).hint("Pass --scenario NAME.")
					}
					r, err := bench.Run(ctx, names[0], cfg)
					if err != nil {
						return err
					}
					return json.NewEncoder(e.stdout).Encode(r)
				}
				rep, err := bench.Suite(ctx, cfg, names, e.stderr)
				if rep == nil || (err != nil && len(rep.Failed) == 0) {
					return err
				}
				// The figures of the scenarios that ran are printed even
				// when some failed; the failures make the exit non-zero.
				var werr error
				if *asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					werr = enc.Encode(rep)
				} else {
					werr = bench.WriteText(e.stdout, rep)
				}
				if err != nil {
					return err
				}
				return werr
			}
		},
	}
}
