package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// foreachMemScenario runs one foreach of n set items (n = full at scale
// 1) at concurrency 32 and checks every item ran. Suite reads its peak
// RSS: foreach-set-1m's is held against foreach-set-100k's, so the memory
// of a foreach must not grow with the items done (issue 17).
//
// The items are the run's input. The run is stored and enqueued by
// `flowrun apply --detach` in a process of its own (in this process under
// go test, without the binary), so this process's peak RSS is a worker's
// that runs the stored run. The item list itself is held while the run
// runs (its input, the input as CEL sees it, the recorded items), so the
// peak does grow with the items the run has; the figure "RSS growth while
// the items ran" is what grew from the foreach's start to the run's end,
// the part that would follow the items done.
func foreachMemScenario(full int) func(context.Context, Config, string, *Result) error {
	return func(ctx context.Context, c Config, dir string, r *Result) error {
		n := c.n(full, 100)
		r.Sizes["items"], r.Sizes["concurrency"] = n, 32
		raw, err := rawCommits(ctx, dir, "NORMAL", c.n(2000, 200))
		if err != nil {
			return err
		}
		db := filepath.Join(dir, "flowrun.db")
		src := fanOutQuiet("fan", 32)
		if len(c.Flowrun) > 0 {
			if err := enqueueFanOut(ctx, c, dir, db, src, n); err != nil {
				return err
			}
		}
		var atStart atomic.Int64
		h, err := open(ctx, dir, "flowrun.db", "NORMAL", interp.Options{OnEvent: func(ev store.Event) {
			if ev.Kind == "step_started" && ev.StepKey == "each" {
				atStart.Store(currentRSSKB())
			}
		}})
		if err != nil {
			return err
		}
		defer h.close()
		var run store.Run
		if len(c.Flowrun) > 0 {
			if run, err = onlyRun(ctx, h); err != nil {
				return err
			}
		} else {
			if _, err := h.compile(ctx, src); err != nil {
				return err
			}
			items := make([]any, n)
			for i := range items {
				items[i] = i
			}
			if run, err = h.start(ctx, "fan", map[string]any{"items": items}); err != nil {
				return err
			}
		}
		r.StartRSSKB = peakRSSKB()
		start := now()
		if run, err = h.drive(ctx, run); err != nil {
			return err
		}
		took := now().Sub(start)
		// Counted in SQL: listing the rows would put the check's own
		// memory into the scenario's peak RSS.
		rows, err := countStepRows(ctx, h.st.Path(), run.ID)
		if err != nil {
			return err
		}
		if rows != n+1 {
			return fmt.Errorf("the foreach run has %d step rows, want %d (its items and the step)", rows, n+1)
		}
		r.figure(Figure{Name: "foreach set items", Value: perSec(n, took), Unit: "items/s", Baseline: &raw})
		if s := atStart.Load(); s > 0 {
			r.figure(Figure{Name: "RSS growth while the items ran", Value: float64(peakRSSKB()-s) / 1024, Unit: "MiB",
				Baseline: &Baseline{Name: "RSS when the foreach began", Value: float64(s) / 1024, Unit: "MiB"}})
		}
		return nil
	}
}

// enqueueFanOut writes the workflow and an input file of n items and
// enqueues a run with `flowrun apply --detach`.
func enqueueFanOut(ctx context.Context, c Config, dir, db, src string, n int) error {
	wf := filepath.Join(dir, "fan.hcl")
	if err := os.WriteFile(wf, []byte(src), 0o600); err != nil {
		return fmt.Errorf("writing the foreach workflow: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(`{"items": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString("]}\n")
	in := filepath.Join(dir, "items.json")
	if err := os.WriteFile(in, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing the foreach items: %w", err)
	}
	_, _, err := runFlowrun(ctx, c, dir, "apply", "--detach", "--db", db, "--inputs", in, wf)
	return err
}

// onlyRun returns the one run of the scratch store.
func onlyRun(ctx context.Context, h *harness) (store.Run, error) {
	db, err := openRaw(h.st.Path(), "NORMAL")
	if err != nil {
		return store.Run{}, err
	}
	var id string
	err = db.QueryRowContext(ctx, `SELECT id FROM runs`).Scan(&id)
	db.Close()
	if err != nil {
		return store.Run{}, fmt.Errorf("finding the run apply --detach enqueued: %w", err)
	}
	return h.st.RunGet(ctx, id)
}

// countStepRows counts the step rows of a run (its steps, items and
// iterations) in SQL.
func countStepRows(ctx context.Context, path, runID string) (int, error) {
	db, err := openRaw(path, "NORMAL")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM steps WHERE run_id = ?1`, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the step rows of run %s: %w", runID, err)
	}
	return n, nil
}

// currentRSSKB is this process's resident set size now, in KiB (Linux:
// /proc/self/statm; 0 elsewhere).
func currentRSSKB() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize()) / 1024
}
