package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// shiftedClock is the wall clock moved by an offset, so that a minute
// boundary comes when the scenario wants it: its timers are real.
type shiftedClock struct {
	clock.Real
	off atomic.Int64 // nanoseconds
}

func (c *shiftedClock) Now() time.Time { return c.Real.Now().Add(time.Duration(c.off.Load())) }

// toBefore shifts the clock so that the next minute boundary is d away.
func (c *shiftedClock) toBefore(d time.Duration) time.Time {
	now := c.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	c.off.Add(int64(next.Sub(now) - d))
	return next
}

// scheduleWorkflow declares n schedules with every = "1m".
func scheduleWorkflow(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"cron\" {\n  version = \"1.0.0\"\n  input \"slot\" { type = string }\n")
	for i := range n {
		fmt.Fprintf(&b, "  schedule \"s%04d\" {\n    every = \"1m\"\n    overlap = \"allow\"\n    inputs = { slot = \"{{ schedule.time }}\" }\n  }\n", i)
	}
	b.WriteString("  step \"s\" {\n    set { slot = \"{{ input.slot }}\" }\n  }\n}\n")
	return b.String()
}

// schedulesScenario: 1,000 schedules with every = "1m" on one worker. The
// fire lag of a slot is from the slot to its run being visible to a
// reader (polled, so an upper bound by the poll interval): p99 under
// 1 s. The lag to the run's creation time (the fire's Now, taken before
// the batch that holds it commits) is shown too. The scheduler's cost per due slot (one FireDue
// pass over a minute's slots, divided by them) is read against a raw
// single-row commit.
func schedulesScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(1000, 20)
	r.Sizes["schedules"] = n
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	clk := &shiftedClock{}
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{Clock: clk})
	if err != nil {
		return err
	}
	defer h.close()
	g, err := h.compile(ctx, scheduleWorkflow(n))
	if err != nil {
		return err
	}
	slot := clk.toBefore(1500 * time.Millisecond)
	if _, err := h.e.ActivateSchedules(ctx, g, dir); err != nil {
		return err
	}

	// A worker fires the slot at the minute boundary.
	w := interp.NewWorker(h.e, interp.WorkerOptions{Concurrency: 16})
	if err := w.Start(ctx); err != nil {
		return err
	}
	created, seen, err := fireLags(ctx, h.st, n, slot, clk)
	if serr := w.Stop(ctx); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	r.figure(Figure{Name: "fire lag p99 (slot to run visible)", Value: ms(quantile(seen, 99)), Unit: "ms",
		Baseline: ptr(commitMS(raw)), Target: &Target{Of: "value", Op: "<=", Limit: 1000}})
	r.figure(Figure{Name: "fire lag p50 (slot to run visible)", Value: ms(quantile(seen, 50)), Unit: "ms", Baseline: ptr(commitMS(raw))})
	r.figure(Figure{Name: "fire lag p99 (slot to run created)", Value: ms(quantile(created, 99)), Unit: "ms", Baseline: ptr(commitMS(raw))})
	r.figure(Figure{Name: "fire lag p50 (slot to run created)", Value: ms(quantile(created, 50)), Unit: "ms", Baseline: ptr(commitMS(raw))})

	// The cost of one pass of the scheduler over the next minute's slots.
	clk.toBefore(0)
	clk.off.Add(int64(time.Millisecond))
	start := now()
	fired, err := h.e.FireDue(ctx)
	took := now().Sub(start)
	if err != nil {
		return err
	}
	if fired != n {
		return fmt.Errorf("one scheduler pass fired %d slots, want %d", fired, n)
	}
	r.figure(Figure{Name: "scheduler cost per due slot", Value: float64(took) / float64(n) / float64(time.Millisecond), Unit: "ms",
		Baseline: ptr(commitMS(raw))})
	return nil
}

// quantile returns the q-th percentile of ds (sorted in place).
func quantile(ds []time.Duration, q int) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*q/100)]
}

// fireLagPoll is how often fireLags reads the runs.
const fireLagPoll = 50 * time.Millisecond

// fireLags waits until every schedule has fired slot and returns, per
// run, its creation time minus the slot, and the time a read first saw it
// minus the slot.
func fireLags(ctx context.Context, st store.Store, n int, slot time.Time, clk *shiftedClock) (created, seen []time.Duration, err error) {
	deadline := now().Add(time.Minute)
	first := map[string]time.Duration{}
	for {
		runs, err := st.RunList(ctx, store.RunListParams{Workflow: "cron"})
		if err != nil {
			return nil, nil, err
		}
		at := clk.Now().Sub(slot)
		for _, run := range runs {
			if _, ok := first[run.ID]; !ok {
				first[run.ID] = at
			}
		}
		if len(runs) >= n {
			for _, run := range runs {
				created = append(created, run.CreatedAt.Sub(slot))
				seen = append(seen, first[run.ID])
			}
			return created, seen, nil
		}
		if now().After(deadline) {
			return nil, nil, fmt.Errorf("%d of %d schedules fired within a minute of the slot", len(runs), n)
		}
		t := clk.NewTimer(fireLagPoll)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		}
	}
}
