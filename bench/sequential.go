package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// setScenario runs a chain of N set steps and one of 10N in one process:
// steps per second against raw single-row commits (FULL: at least half the
// raw rate; NORMAL: at least 10,000 steps/s) and how the time grows with
// the length (10x the steps within 11x the time).
//
// The chains are compiled and stored, and their runs enqueued, by `flowrun
// apply --detach` in processes of their own, as a user's apply does before
// a worker takes the runs: this process only runs stored runs, so its peak
// RSS is a worker's (the 60 MB target), and each compile's peak RSS is
// reported as a figure of its own. Without the flowrun binary (go test)
// the chains are compiled in this process.
func setScenario(sync string) func(context.Context, Config, string, *Result) error {
	return func(ctx context.Context, c Config, dir string, r *Result) error {
		n := c.n(1000, 20)
		r.Sizes["steps_short"], r.Sizes["steps_long"] = n, 10*n
		raw, err := rawCommits(ctx, dir, sync, c.n(2000, 200))
		if err != nil {
			return err
		}
		names, sizes := [2]string{"short", "long"}, [2]int{n, 10 * n}
		var compileRSS [2]int64
		var compileTook [2]time.Duration
		if len(c.Flowrun) > 0 {
			for i, wf := range names {
				file := filepath.Join(dir, wf+".hcl")
				if err := os.WriteFile(file, []byte(setChain(wf, sizes[i])), 0o600); err != nil {
					return fmt.Errorf("writing the %s chain: %w", wf, err)
				}
				d, rss, err := runFlowrun(ctx, c, dir, "apply", "--detach", "--db", filepath.Join(dir, "flowrun.db"), file)
				if err != nil {
					return err
				}
				compileTook[i], compileRSS[i] = d, rss
			}
		}
		h, err := open(ctx, dir, "flowrun.db", sync, interp.Options{})
		if err != nil {
			return err
		}
		defer h.close()
		if len(c.Flowrun) == 0 {
			for i, wf := range names {
				if _, err := h.compile(ctx, setChain(wf, sizes[i])); err != nil {
					return err
				}
			}
		}
		// Each run is found first: the start (with apply's key, as apply and
		// resume do) loads its stored graph and builds its CEL programs,
		// and returns the run apply enqueued. It is timed from its drive to
		// its end.
		var took, startTook [2]time.Duration
		for i, wf := range names {
			start := now()
			run, _, err := h.e.StartRun(ctx, interp.StartParams{Workflow: wf})
			if err != nil {
				return err
			}
			startTook[i] = now().Sub(start)
			start = now()
			if _, err := h.drive(ctx, run); err != nil {
				return err
			}
			took[i] = now().Sub(start)
		}
		rate := perSec(10*n, took[1])
		target := &Target{Of: "ratio", Op: ">=", Limit: 0.5}
		if sync == "NORMAL" {
			target = &Target{Of: "value", Op: ">=", Limit: 10000}
		}
		r.figure(Figure{Name: "sequential set steps (long run)", Value: rate, Unit: "steps/s", Baseline: &raw, Target: target})
		r.figure(Figure{Name: "sequential set steps (short run)", Value: perSec(n, took[0]), Unit: "steps/s", Baseline: &raw})
		r.figure(Figure{Name: "time of 10x the steps", Value: ms(took[1]), Unit: "ms",
			Baseline: &Baseline{Name: "time of the short run", Value: ms(took[0]), Unit: "ms"},
			Target:   &Target{Of: "ratio", Op: "<=", Limit: 11}})
		r.figure(Figure{Name: "first start of the long chain (graph load)", Value: ms(startTook[1]), Unit: "ms",
			Baseline: &Baseline{Name: "first start of the short chain", Value: ms(startTook[0]), Unit: "ms"}})
		if compileRSS[0] > 0 && compileRSS[1] > 0 {
			r.figure(Figure{Name: "compile+store of the long chain (own process)", Value: float64(compileRSS[1]) / 1024, Unit: "MiB",
				Baseline: &Baseline{Name: "the same of the short chain", Value: float64(compileRSS[0]) / 1024, Unit: "MiB"}})
			r.figure(Figure{Name: "compile+store time of the long chain (own process)", Value: ms(compileTook[1]), Unit: "ms",
				Baseline: &Baseline{Name: "the same of the short chain", Value: ms(compileTook[0]), Unit: "ms"}})
		}
		return nil
	}
}

// workerScenario runs 1,000 runs of 10 set steps on one worker at
// concurrency 16, against the sequential single-run rate measured in the
// same process (at least 3x) and raw commits.
func workerScenario(ctx context.Context, c Config, dir string, r *Result) error {
	runs := c.n(1000, 20)
	r.Sizes["runs"], r.Sizes["steps_per_run"], r.Sizes["concurrency"] = runs, 10, 16
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	// The sequential single-run rate, on a store of its own: the same
	// runs of 10 set steps, enqueued first and then driven one at a time
	// to the end, so no commit is shared by two runs.
	seqRuns := c.n(100, 10)
	hs, err := open(ctx, dir, "sequential.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	if _, err := hs.compile(ctx, setChain("ten", 10)); err != nil {
		hs.close()
		return err
	}
	queued := make([]store.Run, 0, seqRuns)
	for range seqRuns {
		run, err := hs.start(ctx, "ten", nil)
		if err != nil {
			hs.close()
			return err
		}
		queued = append(queued, run)
	}
	start := now()
	for _, run := range queued {
		if _, err = hs.drive(ctx, run); err != nil {
			break
		}
	}
	seq := perSec(seqRuns*10, now().Sub(start))
	if cerr := hs.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}

	done := make(chan struct{}, runs)
	var mu sync.Mutex
	finished := map[string]store.RunStatus{}
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{OnEvent: func(ev store.Event) {
		switch ev.Kind {
		case "run_completed", "run_failed", "run_canceled":
			mu.Lock()
			finished[ev.RunID] = store.RunStatus(ev.Kind[len("run_"):])
			mu.Unlock()
			done <- struct{}{}
		}
	}})
	if err != nil {
		return err
	}
	defer h.close()
	if _, err := h.compile(ctx, setChain("ten", 10)); err != nil {
		return err
	}
	// Enqueue every run first, then start the worker: what is timed is
	// the worker draining the queue.
	for range runs {
		if _, _, err := h.e.StartRun(ctx, interp.StartParams{Workflow: "ten", New: true}); err != nil {
			return err
		}
	}
	w := interp.NewWorker(h.e, interp.WorkerOptions{Concurrency: 16})
	start = now()
	if err := w.Start(ctx); err != nil {
		return err
	}
	for range runs {
		select {
		case <-done:
		case <-ctx.Done():
			w.Stop(context.WithoutCancel(ctx))
			return ctx.Err()
		}
	}
	took := now().Sub(start)
	if err := w.Stop(ctx); err != nil {
		return err
	}
	for id, st := range finished {
		if st != store.RunCompleted {
			return fmt.Errorf("run %s ended %s, want completed", id, st)
		}
	}
	rate := perSec(runs*10, took)
	r.figure(Figure{Name: "steps on one worker", Value: rate, Unit: "steps/s",
		Baseline: &Baseline{Name: "sequential single-run set steps, FULL", Value: seq, Unit: "steps/s"},
		Target:   &Target{Of: "ratio", Op: ">=", Limit: 3}})
	r.figure(Figure{Name: "steps on one worker (against raw commits)", Value: rate, Unit: "steps/s", Baseline: &raw})
	r.figure(Figure{Name: "runs on one worker", Value: perSec(runs, took), Unit: "runs/s", Baseline: &raw})
	return nil
}

// foreachScenario runs a foreach over 10,000 items with set bodies at
// concurrency 32: at least 2,000 items/s.
func foreachScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(10000, 50)
	r.Sizes["items"], r.Sizes["concurrency"] = n, 32
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	defer h.close()
	if _, err := h.compile(ctx, fanOut("fan", 32)); err != nil {
		return err
	}
	items := make([]any, n)
	for i := range items {
		items[i] = i
	}
	run, err := h.start(ctx, "fan", map[string]any{"items": items})
	if err != nil {
		return err
	}
	start := now()
	if run, err = h.drive(ctx, run); err != nil {
		return err
	}
	took := now().Sub(start)
	if rows, err := h.countSteps(ctx, run.ID); err != nil || rows < n {
		return fmt.Errorf("the foreach run has %d step rows, want at least %d (%v)", rows, n, err)
	}
	r.figure(Figure{Name: "foreach items", Value: perSec(n, took), Unit: "items/s", Baseline: &raw,
		Target: &Target{Of: "value", Op: ">=", Limit: 2000}})
	return nil
}

func ptr[T any](v T) *T { return &v }
