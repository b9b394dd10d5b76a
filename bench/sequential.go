package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// setScenario runs a chain of N set steps and one of 10N in one process:
// steps per second against raw single-row commits (FULL: at least half the
// raw rate; NORMAL: at least 10,000 steps/s) and how the time grows with
// the length (10x the steps within 11x the time).
func setScenario(sync string) func(context.Context, Config, string, *Result) error {
	return func(ctx context.Context, c Config, dir string, r *Result) error {
		n := c.n(1000, 20)
		r.Sizes["steps_short"], r.Sizes["steps_long"] = n, 10*n
		raw, err := rawCommits(ctx, dir, sync, c.n(2000, 200))
		if err != nil {
			return err
		}
		h, err := open(ctx, dir, "flowrun.db", sync, interp.Options{})
		if err != nil {
			return err
		}
		defer h.close()
		if _, err := h.compile(ctx, setChain("short", n)); err != nil {
			return err
		}
		if _, err := h.compile(ctx, setChain("long", 10*n)); err != nil {
			return err
		}
		// Each run is started first (the first start of a version builds
		// its CEL programs) and timed from its drive to its end.
		var took, startTook [2]time.Duration
		for i, wf := range []string{"short", "long"} {
			start := now()
			run, err := h.start(ctx, wf, nil)
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
		return nil
	}
}

// execScenario runs a chain of exec steps running true, against spawning
// true directly: the per-step overhead beyond the spawn itself must stay
// under 1 ms.
func execScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(1000, 20)
	r.Sizes["steps"] = n
	spawn, err := spawnTrue(ctx, n)
	if err != nil {
		return err
	}
	raw, err := rawCommits(ctx, dir, "FULL", c.n(1000, 100))
	if err != nil {
		return err
	}
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	defer h.close()
	if _, err := h.compile(ctx, execChain("exec", n)); err != nil {
		return err
	}
	run, err := h.start(ctx, "exec", nil)
	if err != nil {
		return err
	}
	start := now()
	if _, err := h.drive(ctx, run); err != nil {
		return err
	}
	per := now().Sub(start) / time.Duration(n)
	spawnB := Baseline{Name: "spawning true with os/exec", Value: ms(spawn), Unit: "ms"}
	r.figure(Figure{Name: "time per exec step", Value: ms(per), Unit: "ms", Baseline: &spawnB})
	r.figure(Figure{Name: "per-step overhead beyond the spawn", Value: ms(per - spawn), Unit: "ms",
		Baseline: ptr(commitMS(raw)), Target: &Target{Of: "value", Op: "<=", Limit: 1}})
	return nil
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
	// The sequential rate, on a store of its own.
	seqN := c.n(1000, 20)
	hs, err := open(ctx, dir, "sequential.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	if _, err := hs.compile(ctx, setChain("chain", seqN)); err != nil {
		hs.close()
		return err
	}
	run, err := hs.start(ctx, "chain", nil)
	start := now()
	if err == nil {
		_, err = hs.drive(ctx, run)
	}
	seq := perSec(seqN, now().Sub(start))
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
