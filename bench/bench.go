package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// Config sizes and places a benchmark.
type Config struct {
	// Scale multiplies every size: 1 is the sizes of the targets (10,000
	// steps, 1,000 runs, 100,000 stored runs, ...); 0.01 is a smoke test.
	// Sizes never go below a small floor, so every scenario still runs.
	Scale float64
	// Dir is the scratch directory; each scenario makes a directory of its
	// own in it. It must exist.
	Dir string
	// Flowrun is the command that runs the flowrun binary (the program and
	// any arguments before the verb), for the apply scenario and for the
	// children of Suite.
	Flowrun []string
	// Postgres is a postgres:// URL of a database the Postgres scenarios
	// may work in, each in a schema of its own that it drops; empty: they
	// are skipped.
	Postgres string
}

// n scales a target size, never below floor.
func (c Config) n(full, floor int) int {
	s := c.Scale
	if s <= 0 {
		s = 1
	}
	return max(floor, int(math.Round(float64(full)*s)))
}

// Baseline is the raw measurement a figure is read against, taken in the
// same process during the same scenario.
type Baseline struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Target is what a figure should reach (the numbers): its value
// (Of "value") or its ratio to the baseline (Of "ratio") compared with
// Limit by Op ("<=" or ">=").
type Target struct {
	Of    string  `json:"of"`
	Op    string  `json:"op"`
	Limit float64 `json:"limit"`
}

// String renders the target as "ratio >= 0.5".
func (t Target) String() string { return fmt.Sprintf("%s %s %g", t.Of, t.Op, t.Limit) }

// Figure is one measured number.
type Figure struct {
	Name     string    `json:"name"`
	Value    float64   `json:"value"`
	Unit     string    `json:"unit"`
	Baseline *Baseline `json:"baseline,omitempty"`
	// Ratio is Value / Baseline.Value (0 without a baseline).
	Ratio  float64 `json:"ratio,omitempty"`
	Target *Target `json:"target,omitempty"`
	// Met says whether the target is reached (absent without a target).
	Met *bool `json:"met,omitempty"`
}

// check fills Ratio and Met.
func (f *Figure) check() {
	if f.Baseline != nil && f.Baseline.Value != 0 {
		f.Ratio = f.Value / f.Baseline.Value
	}
	if f.Target == nil {
		return
	}
	v := f.Value
	if f.Target.Of == "ratio" {
		v = f.Ratio
	}
	met := v <= f.Target.Limit
	if f.Target.Op == ">=" {
		met = v >= f.Target.Limit
	}
	f.Met = &met
}

// Result is what one scenario measured.
type Result struct {
	Scenario    string         `json:"scenario"`
	Description string         `json:"description"`
	Sizes       map[string]int `json:"sizes"`
	Figures     []Figure       `json:"figures"`
	// StartRSSKB is the peak RSS of the process when the scenario began
	// (the Go runtime, the store opened): the baseline of PeakRSSKB.
	StartRSSKB int64 `json:"start_rss_kb"`
	// PeakRSSKB is the peak RSS of the process that ran the scenario, in
	// KiB, not counting the processes it ran (RUSAGE_SELF).
	PeakRSSKB int64   `json:"peak_rss_kb"`
	WallMS    float64 `json:"wall_ms"`
}

// figure appends a figure and checks it.
func (r *Result) figure(f Figure) {
	f.check()
	r.Figures = append(r.Figures, f)
}

// Scenario is one benchmark workload.
type Scenario struct {
	Name        string
	Description string
	run         func(ctx context.Context, c Config, dir string, r *Result) error
	// rss is the target of the scenario's peak RSS, when it has one: in
	// MiB (Of "value"), or as a ratio to the peak RSS of scenario rssOf.
	rss   *Target
	rssOf string
	// postgres says the scenario needs Config.Postgres.
	postgres bool
}

// Scenarios lists every scenario, in the order Suite runs them.
func Scenarios() []*Scenario {
	return []*Scenario{
		{Name: "set-full", Description: "sequential set steps, synchronous=FULL: one run of N and one of 10N steps, stored by flowrun apply --detach in processes of their own",
			run: setScenario("FULL"), rss: &Target{Of: "value", Op: "<=", Limit: 60}},
		{Name: "set-normal", Description: "sequential set steps, synchronous=NORMAL: one run of N and one of 10N steps, stored by flowrun apply --detach in processes of their own",
			run: setScenario("NORMAL"), rss: &Target{Of: "value", Op: "<=", Limit: 60}},
		{Name: "compile", Description: "compiling chains of N/10 and N set steps with a CEL template each (lang.LoadFile, lang.Load)",
			run: compileScenario},
		{Name: "store-chain", Description: "compiling and storing chains of N/10 and N set steps with a {{ }} template each (flowrun apply --detach, a process each) against hclsyntax parsing the same file alone (a process each)",
			run: storeChainScenario},
		{Name: "exec", Description: "sequential exec steps running true", run: execScenario},
		{Name: "worker", Description: "1,000 runs of 10 set steps on one worker at concurrency 16, FULL", run: workerScenario},
		{Name: "telemetry", Description: "the worker scenario without telemetry, with Prometheus metrics, and with traces to a local OTLP/HTTP receiver, side by side (best of 3 rounds each)", run: telemetryScenario},
		{Name: "foreach", Description: "a foreach over 10,000 items with set bodies at concurrency 32, FULL", run: foreachScenario},
		{Name: "resume", Description: "resuming a run that has 10,000 completed steps: time to its next step starting", run: resumeScenario},
		{Name: "resume-worker", Description: "resuming runs that have 10,000 completed steps through the binaries: flowrun signal from its own process, the next step started by a running flowrun worker",
			run: resumeWorkerScenario},
		{Name: "history-1k", Description: "a run of 1,000 attempts (an until loop of http steps): peak RSS", run: historyScenario(1000)},
		{Name: "history-100k", Description: "a run of 100,000 attempts (an until loop of http steps): peak RSS against history-1k",
			run: historyScenario(100000), rss: &Target{Of: "ratio", Op: "<=", Limit: 1.5}, rssOf: "history-1k"},
		{Name: "foreach-set-100k", Description: "a foreach of 100,000 set items at concurrency 32, the items an input: peak RSS", run: foreachMemScenario(100000)},
		{Name: "foreach-set-1m", Description: "a foreach of 1,000,000 set items at concurrency 32, the items an input: peak RSS against foreach-set-100k",
			run: foreachMemScenario(1000000), rss: &Target{Of: "ratio", Op: "<=", Limit: 1.5}, rssOf: "foreach-set-100k"},
		{Name: "list", Description: "runs and show on a store of 100,000 runs and 1,000,000 attempts", run: listScenario},
		{Name: "web", Description: "the web dashboard on a store of 100,000 runs: the runs page and a 1,000-step run's page against the API's calls, a commit reaching an open page, a first load's weight", run: webScenario},
		{Name: "apply", Description: "flowrun apply of a 3-step workflow, wall time of the process", run: applyScenario},
		{Name: "api-batch", Description: "one batch start request of 10,000 runs through flowrun serve's API (a loopback socket), FULL", run: apiBatchScenario},
		{Name: "api-start", Description: "500 sequential start requests through flowrun serve's API (a loopback socket), FULL: latency against one commit", run: apiStartScenario},
		{Name: "api-sse", Description: "200 clients following one run's events through flowrun serve's API while a worker runs it and 20 signals come: delivery lag", run: apiSSEScenario},
		{Name: "apply-print", Description: "flowrun apply of a foreach of 100,000 set items outside a terminal, against the same with --quiet: what its progress lines cost",
			run: applyPrintScenario},
		{Name: "pg-latency", Description: "steps/s of 1, 2 and 4 worker processes on Postgres behind a proxy adding a 0, 1 and 5 ms round trip (needs --pg)",
			run: pgLatencyScenario, postgres: true},
		{Name: "apply-http", Description: "flowrun apply of 1,000 sequential http steps against a loopback server in a process of its own (the process), against the floor measured beside it: one keep-alive GET to that server and one single-row FULL commit per step",
			run: applyHTTPScenario},
		{Name: "apply-exec", Description: "flowrun apply of 1,000 sequential exec steps running true (the process), against the floor measured beside it: one spawn of true and one single-row FULL commit per step",
			run: applyExecScenario},
		{Name: "apply-mem", Description: "peak RSS of flowrun apply of 100 and of 1,000 set steps, each a process of its own, against flowrun help's",
			run: applyMemScenario},
		{Name: "schedules", Description: "1,000 schedules with every = \"1m\" on one worker: fire lag and the scheduler's cost per due slot", run: schedulesScenario},
	}
}

// Lookup returns the scenario with the name, or nil.
func Lookup(name string) *Scenario {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Names returns the scenario names, sorted.
func Names() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// Run runs one scenario in this process, in a new directory under c.Dir.
// PeakRSSKB is this process's peak RSS, which under Suite is the child's
// own.
func Run(ctx context.Context, name string, c Config) (*Result, error) {
	s := Lookup(name)
	if s == nil {
		return nil, fmt.Errorf("there is no scenario %q; choose one of %s", name, strings.Join(Names(), ", "))
	}
	dir, err := os.MkdirTemp(c.Dir, name+"-")
	if err != nil {
		return nil, fmt.Errorf("scenario %s: making its scratch directory: %w", name, err)
	}
	defer os.RemoveAll(dir)
	r := &Result{Scenario: s.Name, Description: s.Description, Sizes: map[string]int{}, StartRSSKB: peakRSSKB()}
	start := now()
	if err := s.run(ctx, c, dir, r); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	r.WallMS = ms(now().Sub(start))
	r.PeakRSSKB = peakRSSKB()
	return r, nil
}

// peakRSSKB is this process's peak resident set size in KiB (Linux
// reports ru_maxrss in KiB).
func peakRSSKB() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss
}

// now reads the real clock (benchmarks measure wall time).
func now() time.Time { return clock.Real{}.Now() }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
