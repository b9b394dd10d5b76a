package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// Report is the result of a suite: every scenario's figures, and the
// machine they were measured on.
type Report struct {
	Scale     float64 `json:"scale"`
	GoVersion string  `json:"go_version"`
	OS        string  `json:"os"`
	Arch      string  `json:"arch"`
	CPUs      int     `json:"cpus"`
	// Cgo says the measured binary was built with cgo (CGO_ENABLED=1): it
	// then maps the C library and the dynamic loader, which its peak RSS
	// holds; a static build (CGO_ENABLED=0) does not.
	Cgo     bool      `json:"cgo"`
	Results []*Result `json:"results"`
	// Failed lists the scenarios that failed, each with its error; the
	// suite goes on after one (left out when none did).
	Failed []Failure `json:"failed,omitempty"`
}

// Failure is a scenario that failed.
type Failure struct {
	Scenario string `json:"scenario"`
	Error    string `json:"error"`
}

// Suite runs the named scenarios (every one when names is empty), each in
// a child process: c.Flowrun followed by `bench --child --scenario NAME
// --scale S --dir DIR`, which prints its Result as JSON. The child's own
// peak RSS (without the processes it ran) is checked against the
// scenario's memory target. progress, when not nil, gets a line per
// scenario as it starts. A scenario that fails is recorded in the report's
// Failed and the others still run; the error then names the failed ones.
func Suite(ctx context.Context, c Config, names []string, progress io.Writer) (*Report, error) {
	if len(c.Flowrun) == 0 {
		return nil, errNoFlowrun
	}
	var scenarios []*Scenario
	for _, s := range Scenarios() {
		if len(names) == 0 || slices.Contains(names, s.Name) {
			scenarios = append(scenarios, s)
		}
	}
	for _, n := range names {
		if Lookup(n) == nil {
			return nil, fmt.Errorf("there is no scenario %q; choose among %s", n, strings.Join(Names(), ", "))
		}
	}
	rep := &Report{Scale: c.Scale, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Cgo: builtWithCgo()}
	peaks := map[string]int64{}
	for _, s := range scenarios {
		if s.postgres && c.Postgres == "" {
			if len(names) > 0 {
				return rep, fmt.Errorf("scenario %s: %w", s.Name, errNoPostgres)
			}
			if progress != nil {
				fmt.Fprintf(progress, "bench: %s: skipped: it needs a Postgres database (--pg URL)\n", s.Name)
			}
			continue
		}
		if progress != nil {
			fmt.Fprintf(progress, "bench: %s: %s\n", s.Name, s.Description)
		}
		r, err := child(ctx, c, s.Name)
		if err != nil {
			if ctx.Err() != nil {
				return rep, err
			}
			rep.Failed = append(rep.Failed, Failure{Scenario: s.Name, Error: err.Error()})
			if progress != nil {
				fmt.Fprintf(progress, "bench: %s: failed; the other scenarios go on\n", s.Name)
			}
			continue
		}
		peaks[s.Name] = r.PeakRSSKB
		mib := float64(r.PeakRSSKB) / 1024
		switch {
		case s.rssOf != "" && peaks[s.rssOf] > 0:
			r.figure(Figure{Name: "peak RSS against " + s.rssOf, Value: mib, Unit: "MiB",
				Baseline: &Baseline{Name: "peak RSS of " + s.rssOf, Value: float64(peaks[s.rssOf]) / 1024, Unit: "MiB"}, Target: s.rss})
		case s.rssOf == "":
			r.figure(Figure{Name: "peak RSS", Value: mib, Unit: "MiB",
				Baseline: &Baseline{Name: "RSS at the scenario's start", Value: float64(r.StartRSSKB) / 1024, Unit: "MiB"}, Target: s.rss})
		}
		rep.Results = append(rep.Results, r)
	}
	if len(rep.Failed) > 0 {
		names := make([]string, len(rep.Failed))
		for i, f := range rep.Failed {
			names[i] = f.Scenario
		}
		return rep, fmt.Errorf("%d scenario(s) failed: %s (their errors are in the report)", len(rep.Failed), strings.Join(names, ", "))
	}
	return rep, nil
}

// child runs one scenario in a child process and returns its result with
// the child's peak RSS.
func child(ctx context.Context, c Config, name string) (*Result, error) {
	args := append(slices.Clone(c.Flowrun[1:]), "bench", "--child", "--scenario", name,
		"--scale", strconv.FormatFloat(c.Scale, 'g', -1, 64), "--dir", c.Dir)
	if c.Postgres != "" {
		args = append(args, "--pg", c.Postgres)
	}
	cmd := exec.CommandContext(ctx, c.Flowrun[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("scenario %s failed in its child process: %w\n%s", name, err, strings.TrimSpace(stderr.String()))
	}
	var r Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("scenario %s: the child printed no result (%w):\n%s", name, err, stdout.Bytes())
	}
	// The child's own peak (RUSAGE_SELF, which Run reports) is its figure:
	// the rusage wait4 returns also counts the processes the child ran and
	// waited for (a scenario's flowrun apply), whose peaks are their own.
	if rss := maxRSS(cmd.ProcessState); r.PeakRSSKB <= 0 && rss > 0 {
		r.PeakRSSKB = rss
	}
	return &r, nil
}

// WriteText prints a report for people: per scenario, each figure with
// its baseline, ratio and target.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	build := "static"
	if rep.Cgo {
		build = "cgo"
	}
	fmt.Fprintf(&b, "flowrun bench, scale %g, %s %s/%s %s, %d CPUs (targets are for scale 1)\n", rep.Scale, rep.GoVersion, rep.OS, rep.Arch, build, rep.CPUs)
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "\n%s: %s\n", r.Scenario, r.Description)
		var sizes []string
		for k, v := range r.Sizes {
			sizes = append(sizes, k+"="+strconv.Itoa(v))
		}
		slices.Sort(sizes)
		fmt.Fprintf(&b, "  sizes: %s; wall %.0f ms\n", strings.Join(sizes, " "), r.WallMS)
		for _, f := range r.Figures {
			fmt.Fprintf(&b, "  %-48s %12s %-10s", f.Name, num(f.Value), f.Unit)
			if f.Baseline != nil {
				fmt.Fprintf(&b, " = %7.3fx %s (%s %s)", f.Ratio, f.Baseline.Name, num(f.Baseline.Value), f.Baseline.Unit)
			}
			if f.Target != nil {
				verdict := "MISSED"
				if f.Met != nil && *f.Met {
					verdict = "met"
				}
				fmt.Fprintf(&b, "  [target %s: %s]", f.Target, verdict)
			}
			b.WriteString("\n")
		}
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(&b, "\n%s: FAILED\n  %s\n", f.Scenario, strings.ReplaceAll(strings.TrimSpace(f.Error), "\n", "\n  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// num prints a figure with sensible precision.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// builtWithCgo reports whether this binary, the one the scenarios run, was
// built with cgo.
func builtWithCgo() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value == "1"
		}
	}
	return false
}
