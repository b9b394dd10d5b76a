package spec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// epoch is where every case's fake clock starts.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// outsideWait is how far ahead a parked run's next due time must be for
// the runner to treat it as waiting on the outside (a signal, a child with
// no timer): the engine parks such runs about a century ahead.
const outsideWait = 50 * 365 * 24 * time.Hour

// settleLimit is the real-time safety net for one settle: a case whose
// engine neither finishes nor parks nor hangs on $HANG in this time fails.
const settleLimit = 60 * time.Second

// hungQuiet is how long the engine must wait only on $HANG actions before
// the runner takes it as hung, so that an engine reacting to the last
// command (killing an action whose timer just fired) is not mistaken for
// a hung one.
const hungQuiet = 100 * time.Millisecond

// driver is the simulated world of one case: a store, a fake clock, and
// the current engine (one simulated process), which restart replaces.
type driver struct {
	t     *testing.T
	work  string // the case directory
	ctx   context.Context
	db    *sqlite.Store
	clk   *clock.Fake
	env   map[string]string
	hangs *hangs

	gen int // engines started so far
	cs  *crashStore
	eng *interp.Engine
	dr  *drive // the Drive in progress, if any

	crashKey string // armed by crash-at for the first engine
	crashN   int

	root     string // the run the case follows
	workflow string
	graphs   []*graph.Graph // stored at the first start
	applied  bool
}

// drive is one Engine.Drive call running in the background.
type drive struct {
	cancel context.CancelFunc
	done   chan error
}

// newEngine starts a new simulated process on the store: a new owner
// (with a pid that cannot exist, so the next process sees it as dead),
// and a seeded random source.
func (d *driver) newEngine() {
	d.gen++
	d.cs = &crashStore{Store: d.db}
	if d.gen == 1 {
		d.cs.crashKey, d.cs.crashN = d.crashKey, d.crashN
	}
	d.eng = interp.New(d.cs, interp.Options{
		Clock: d.clk,
		// The host names the case: cases run in parallel with the same
		// seeded run ids, and an owner of their own keeps one case's
		// reclaim from killing another case's exec processes.
		Owner:    store.Owner{Host: "conformance-" + strings.ReplaceAll(d.t.Name(), "/", "-"), PID: 1<<22 + 1000 + d.gen, Worker: "w"},
		LeaseFor: 24 * time.Hour,
		Getenv:   func(k string) string { return d.env[k] },
		Rand:     rand.New(rand.NewPCG(1, uint64(d.gen))),
		ParkWait: -1,
	})
}

// storeGraphs stores the compiled workflows once, before the first run.
func (d *driver) storeGraphs() error {
	if d.applied {
		return nil
	}
	for _, g := range d.graphs {
		if _, err := d.eng.StoreGraph(d.ctx, g); err != nil {
			return err
		}
	}
	d.applied = true
	return nil
}

// start creates (or finds, by its key) a run of the case's workflow and
// follows it.
func (d *driver) start(inputs map[string]any) (bool, error) {
	if err := d.storeGraphs(); err != nil {
		return false, err
	}
	// The case directory holds workflow.hcl: it is the run's work dir, as
	// flowrun apply records the workflow file's directory.
	run, created, err := d.eng.StartRun(d.ctx, interp.StartParams{Workflow: d.workflow, Inputs: inputs, WorkDir: d.work})
	if err != nil {
		return false, err
	}
	d.root = run.ID
	return created, nil
}

// startDrive runs Engine.Drive on the followed run in the background.
func (d *driver) startDrive() {
	ctx, cancel := context.WithCancel(d.ctx)
	dr := &drive{cancel: cancel, done: make(chan error, 1)}
	eng, root := d.eng, d.root
	go func() {
		_, err := eng.Drive(ctx, root)
		dr.done <- err
	}()
	d.dr = dr
}

// drain runs what is due at the current fake time: it drives the followed
// run (and its children) until Drive returns (the run is finished, parked
// or blocked) or until the engine only waits on $HANG actions, in which
// case the Drive stays in progress for the next command.
func (d *driver) drain() error {
	if d.root == "" {
		return nil
	}
	if d.dr == nil {
		if d.cs.dead.Load() {
			return nil // a dead process does nothing; restart starts a new one
		}
		d.startDrive()
	}
	limit := time.Now().Add(settleLimit)
	var hungSince time.Time
	for {
		select {
		case err := <-d.dr.done:
			d.dr.cancel()
			d.dr = nil
			if err != nil && !d.cs.dead.Load() {
				return fmt.Errorf("the engine failed: %w", err)
			}
			return nil
		case <-time.After(5 * time.Millisecond):
		}
		hung, err := d.hung()
		if err != nil {
			return err
		}
		switch {
		case !hung:
			hungSince = time.Time{}
		case hungSince.IsZero():
			hungSince = time.Now()
		case time.Since(hungSince) >= hungQuiet:
			return nil
		}
		if time.Now().After(limit) {
			return fmt.Errorf("the engine neither finished, parked nor hung on $HANG within %s", settleLimit)
		}
	}
}

// hung reports whether every attempt in flight in the store is a $HANG
// process or a request to /hang, and there is at least one.
func (d *driver) hung() (bool, error) {
	n := d.hangs.alive()
	if n == 0 {
		return false, nil
	}
	runs, err := d.db.RunList(d.ctx, store.RunListParams{})
	if err != nil {
		return false, fmt.Errorf("list runs: %w", err)
	}
	running := 0
	for _, r := range runs {
		if r.Status.Terminal() {
			continue
		}
		as, err := d.db.AttemptList(d.ctx, r.ID, "")
		if err != nil {
			return false, fmt.Errorf("list attempts: %w", err)
		}
		for _, a := range as {
			if a.Status == store.AttemptRunning {
				running++
			}
		}
	}
	return running == n, nil
}

// settle drains, then moves the fake clock to the next due time of the
// run's tree and drains again, until the run is terminal or blocked, waits
// only on the outside (a signal, a queue), hangs on $HANG, or the engine
// is dead.
func (d *driver) settle() error {
	for i := 0; ; i++ {
		if i > 10000 {
			return errors.New("the run was still due after 10000 clock moves; it loops")
		}
		if err := d.drain(); err != nil {
			return err
		}
		if d.root == "" || d.dr != nil || d.cs.dead.Load() {
			return nil
		}
		run, err := d.db.RunGet(d.ctx, d.root)
		if err != nil {
			return fmt.Errorf("read run: %w", err)
		}
		if run.Status.Terminal() || run.Status == store.RunBlocked {
			return nil
		}
		next, ok, err := d.db.RunNextAvailable(d.ctx, run.RootRunID)
		if err != nil {
			return fmt.Errorf("next due time: %w", err)
		}
		now := d.clk.Now()
		if !ok || next.Sub(now) > outsideWait {
			return nil
		}
		d.clk.Set(next)
	}
}

// restart kills the current process at this instant (its writes fail from
// now on and its actions are killed) and starts a new one.
func (d *driver) restart() error {
	d.cs.dead.Store(true)
	if d.dr != nil {
		d.dr.cancel()
		select {
		case <-d.dr.done:
		case <-time.After(settleLimit):
			return errors.New("the dead engine's Drive did not return")
		}
		d.dr = nil
	}
	d.newEngine()
	return d.drain()
}

// stop ends a Drive still in progress at the end of the case.
func (d *driver) stop() {
	if d.dr == nil {
		return
	}
	d.dr.cancel()
	select {
	case <-d.dr.done:
	case <-time.After(settleLimit):
		d.t.Errorf("the engine's Drive did not stop")
	}
	d.dr = nil
}

// view returns the followed run's show --json object with run ids masked.
func (d *driver) view() (any, error) {
	v, err := d.eng.Show(d.ctx, d.root)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the run view: %w", err)
	}
	doc, err := decodeDoc(b)
	if err != nil {
		return nil, fmt.Errorf("decode the run view: %w", err)
	}
	ids, err := d.runIDs()
	if err != nil {
		return nil, err
	}
	return mask(doc, ids), nil
}

// runIDs returns the ids of every run in the store, for masking.
func (d *driver) runIDs() (map[string]bool, error) {
	runs, err := d.db.RunList(d.ctx, store.RunListParams{})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.ID] = true
	}
	return ids, nil
}
