package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// listScenario seeds a store with 100,000 runs and 1,000,000 attempts
// (and one run of 10,000 steps), then opens it as a new flowrun process
// would and times `flowrun runs` (the first page of 50), a filtered page,
// and `flowrun show --json` of the 10,000-step run, each against the raw
// query of the same rows on a plain connection.
func listScenario(ctx context.Context, c Config, dir string, r *Result) error {
	runs := c.n(100000, 200)
	longSteps := c.n(10000, 50)
	r.Sizes["runs"], r.Sizes["attempts"], r.Sizes["show_steps"] = runs, runs*10, longSteps
	path := filepath.Join(dir, "flowrun.db")
	start := now()
	longID, err := seedRunsStore(ctx, dir, runs, longSteps)
	if err != nil {
		return err
	}
	r.Sizes["seed_ms"] = int(ms(now().Sub(start)))

	rawPage, rawFailed, rawSteps, err := rawReads(ctx, path, longID)
	if err != nil {
		return err
	}

	// A fresh store and engine: what `flowrun runs` and `flowrun show` do.
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	defer h.close()
	var page []store.RunSummary
	took, err := timed(func() (err error) {
		page, err = h.st.RunList(ctx, store.RunListParams{Limit: 50})
		return err
	})
	if err != nil {
		return err
	}
	if len(page) != 50 {
		return fmt.Errorf("the first page has %d runs, want 50", len(page))
	}
	r.figure(Figure{Name: "runs: first page of 50", Value: ms(took), Unit: "ms", Baseline: &rawPage,
		Target: &Target{Of: "value", Op: "<=", Limit: 50}})
	took, err = timed(func() (err error) {
		page, err = h.st.RunList(ctx, store.RunListParams{Status: store.RunFailed, Limit: 50})
		return err
	})
	if err != nil {
		return err
	}
	r.figure(Figure{Name: "runs --status failed: first page", Value: ms(took), Unit: "ms", Baseline: &rawFailed,
		Target: &Target{Of: "value", Op: "<=", Limit: 50}})

	for _, pass := range []string{"cold", "warm"} {
		var size int
		took, err = timed(func() error {
			v, err := h.e.Show(ctx, longID)
			if err != nil {
				return err
			}
			b, err := json.Marshal(v)
			size = len(b)
			return err
		})
		if err != nil {
			return err
		}
		if size < longSteps*10 {
			return fmt.Errorf("show printed %d bytes for %d steps", size, longSteps)
		}
		f := Figure{Name: "show --json of the long run (" + pass + ")", Value: ms(took), Unit: "ms", Baseline: &rawSteps}
		if pass == "cold" {
			f.Target = &Target{Of: "value", Op: "<=", Limit: 200}
		}
		r.figure(f)
	}
	return nil
}

// rawReads times, on a plain connection, the rows the listing and show
// need: the newest 50 runs, the newest 50 failed runs, and every step
// column of the long run.
func rawReads(ctx context.Context, path, longID string) (page, failed, steps Baseline, err error) {
	db, err := openRaw(path, "FULL")
	if err != nil {
		return
	}
	defer db.Close()
	query := func(q string, args ...any) (time.Duration, error) {
		return timed(func() error {
			rows, err := db.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			cols, err := rows.Columns()
			if err != nil {
				return err
			}
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			for rows.Next() {
				if err := rows.Scan(vals...); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	}
	var d time.Duration
	if d, err = query(`SELECT id, workflow, version, key, status, created_at, finished_at FROM runs ORDER BY created_at DESC, id DESC LIMIT 50`); err != nil {
		return
	}
	page = Baseline{Name: "raw SELECT of the newest 50 runs", Value: ms(d), Unit: "ms"}
	if d, err = query(`SELECT id, workflow, version, key, status, created_at, finished_at FROM runs WHERE status = 'failed' ORDER BY created_at DESC, id DESC LIMIT 50`); err != nil {
		return
	}
	failed = Baseline{Name: "raw SELECT of the newest 50 failed runs", Value: ms(d), Unit: "ms"}
	if d, err = query(`SELECT * FROM steps WHERE run_id = ?1`, longID); err != nil {
		return
	}
	steps = Baseline{Name: "raw SELECT of the long run's step rows", Value: ms(d), Unit: "ms"}
	return
}

// timed runs fn and returns how long it took.
func timed(fn func() error) (time.Duration, error) {
	start := now()
	err := fn()
	return now().Sub(start), err
}

// seedRunsStore stores the "ten" (10 exec steps) and "long" (longSteps set
// steps) workflows in dir/flowrun.db, then seeds runs runs of "ten" and
// one run of "long" with bulk INSERTs (seed): the store of the list and
// web scenarios. It returns the long run's id.
func seedRunsStore(ctx context.Context, dir string, runs, longSteps int) (string, error) {
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return "", err
	}
	_, err = h.compile(ctx, execChain("ten", 10))
	if err == nil {
		_, err = h.compile(ctx, setChain("long", longSteps))
	}
	var ten, long store.Version
	if err == nil {
		ten, err = h.st.VersionGet(ctx, "ten", "1.0.0")
	}
	if err == nil {
		long, err = h.st.VersionGet(ctx, "long", "1.0.0")
	}
	if cerr := h.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	longID := seedRunID(runs)
	err = seed(ctx, filepath.Join(dir, "flowrun.db"), seedParams{runs: runs, stepsPerRun: 10, workflow: "ten", version: "1.0.0", hash: ten.Hash,
		long: longID, longWorkflow: "long", longHash: long.Hash, longSteps: longSteps})
	return longID, err
}
