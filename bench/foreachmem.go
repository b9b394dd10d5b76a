package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// that runs the stored run; this process holds neither the items it wrote
// nor the run it drives. Two parts of a foreach's memory grow with its
// items whatever the engine does, and the figures tell them apart: the
// item list (the run's input, held once as its JSON) and the step's output,
// the list of the items' outputs, written in one commit at the end. "RSS
// growth while the items ran" is what the peak grew by from the foreach's
// start to the end of 99% of its items, the part that would follow the items
// done; "RSS growth writing the foreach output" is what the last items and
// the commit of the output added after that.
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
		var atStart, atLast atomic.Int64
		var ended atomic.Int64
		h, err := open(ctx, dir, "flowrun.db", "NORMAL", interp.Options{OnEvent: func(ev store.Event) {
			switch {
			case ev.Kind == "step_started" && ev.StepKey == "each":
				atStart.Store(currentRSSKB())
			case ev.Kind == "step_completed" && strings.HasPrefix(ev.StepKey, "each["):
				// Not the last item's end: its commit is the one that also
				// writes the step's output.
				if ended.Add(1) == int64(n-n/100) {
					atLast.Store(peakRSSKB())
				}
			}
		}})
		if err != nil {
			return err
		}
		defer h.close()
		var run store.Run
		if len(c.Flowrun) > 0 {
			if run.ID, err = onlyRun(ctx, h); err != nil {
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
			run = store.Run{ID: run.ID} // not its inputs: this process is the worker
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
		s, last := atStart.Load(), atLast.Load()
		if s > 0 && last > 0 {
			r.figure(Figure{Name: "RSS growth while the items ran", Value: float64(last-s) / 1024, Unit: "MiB",
				Baseline: &Baseline{Name: "RSS when the foreach began", Value: float64(s) / 1024, Unit: "MiB"}})
			size, err := stepOutputBytes(ctx, h.st.Path(), run.ID, "each")
			if err != nil {
				return err
			}
			r.figure(Figure{Name: "RSS growth writing the foreach output", Value: float64(peakRSSKB()-last) / 1024, Unit: "MiB",
				Baseline: &Baseline{Name: "the output's JSON", Value: float64(size) / (1 << 20), Unit: "MiB"}})
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
	// Written as it goes: a buffer of the whole list would be this
	// process's memory, counted in the worker's peak RSS.
	in := filepath.Join(dir, "items.json")
	f, err := os.OpenFile(in, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("writing the foreach items: %w", err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"items": [`)
	for i := range n {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(strconv.Itoa(i))
	}
	w.WriteString("]}\n")
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return fmt.Errorf("writing the foreach items: %w", err)
	}
	_, _, err = runFlowrun(ctx, c, dir, "apply", "--detach", "--db", db, "--inputs", in, wf)
	return err
}

// onlyRun returns the id of the one run of the scratch store (only its
// id: the run's inputs are the items, which this process must not hold).
func onlyRun(ctx context.Context, h *harness) (string, error) {
	db, err := openRaw(h.st.Path(), "NORMAL")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var id string
	if err := db.QueryRowContext(ctx, `SELECT id FROM runs`).Scan(&id); err != nil {
		return "", fmt.Errorf("finding the run apply --detach enqueued: %w", err)
	}
	return id, nil
}

// stepOutputBytes is the length of the output a read of a run's step
// returns, in SQL (reading it would put it into the scenario's peak RSS).
// A foreach written with store.ItemOutputs is the list of its items'
// outputs: their lengths, the commas and the brackets.
func stepOutputBytes(ctx context.Context, path, runID, key string) (int64, error) {
	db, err := openRaw(path, "NORMAL")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	q := `SELECT CASE WHEN s.output = ?3 THEN
			(SELECT 1 + count(*) + coalesce(sum(length(CAST(CASE WHEN it.status = 'completed' AND it.output IS NOT NULL AND it.output <> ''
				THEN it.output ELSE 'null' END AS BLOB))), 0)
			FROM steps it WHERE it.run_id = s.run_id AND it.step = s.step AND it.idx >= 0 AND it.iter = -1)
		ELSE coalesce(length(CAST(s.output AS BLOB)), 0) END
		FROM steps s WHERE s.run_id = ?1 AND s.key = ?2`
	if err := db.QueryRowContext(ctx, q, runID, key, store.ItemOutputsText).Scan(&n); err != nil {
		return 0, fmt.Errorf("measuring the output of step %s of run %s: %w", key, runID, err)
	}
	return n, nil
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
