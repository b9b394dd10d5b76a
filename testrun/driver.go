package testrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// The engine calls a driver makes that commit (a crash point can fall
// inside them): StartRun and Signal write without a commit of the engine.
const (
	callDrive  = "drive"
	callRebind = "rebind"
	callDecide = "decide"
)

// driverState is where the loop of an execution is: the run it drives,
// what it has sent and applied, and the engine call it is in. A checkpoint
// copies it, so that a crash replay resumes the loop as it was when the
// engine was dropped.
type driverState struct {
	ID        string
	Sent      []bool // per signal, in the order they are due
	UpApplied bool
	UpDecided bool
	Parked    bool
	Round     int
	Holds     int
	Call      string
}

func (s driverState) clone() driverState {
	s.Sent = slices.Clone(s.Sent)
	return s
}

// signalDue is a signal of the test and when it is due.
type signalDue struct {
	sig *testfile.Signal
	at  time.Time
}

// driver runs one execution: it drives the run, moves the virtual clock to
// the next thing due, sends the test's signals and applies its upgrade.
type driver struct {
	ctx   context.Context
	s     *session
	x     *execution
	st    *sqlite.Store // a scratch store: crash tests snapshot and digest it
	clk   *clock.Fake
	src   *pcgSource
	eng   *interp.Engine
	inc   int
	sigs  []signalDue
	start time.Time
	upAt  time.Time
	// ds is guarded by x.mu: the hold hook and checkpoints read it from
	// the engine's goroutines.
	ds driverState
	// rec, set on the uninterrupted execution of a crash test, records its
	// checkpoints and points; base, set on a crash replay, is that record,
	// the points the replay stops at.
	rec  *record
	base *record
}

func newDriver(ctx context.Context, s *session, x *execution, st *sqlite.Store, clk *clock.Fake, start time.Time) *driver {
	d := &driver{ctx: ctx, s: s, x: x, st: st, clk: clk, start: start}
	for _, sg := range s.t.Signals {
		d.sigs = append(d.sigs, signalDue{sig: sg, at: start.Add(time.Duration(sg.AfterMS) * time.Millisecond)})
	}
	sort.SliceStable(d.sigs, func(i, j int) bool { return d.sigs[i].at.Before(d.sigs[j].at) })
	d.ds.Sent = make([]bool, len(d.sigs))
	if up := s.t.Upgrade; up != nil {
		d.upAt = start.Add(time.Duration(up.AfterMS) * time.Millisecond)
	} else {
		d.ds.UpApplied, d.ds.UpDecided = true, true
	}
	x.hold = d.hold
	return d
}

func (d *driver) update(f func(*driverState)) {
	d.x.mu.Lock()
	defer d.x.mu.Unlock()
	f(&d.ds)
}

// hold answers the engine's HoldTimer hook. A run that only its own timers
// move on waits for them inside Drive: the clock moves to its next timer
// there, unless a signal or the upgrade is due first, which the loop
// brings when the run parks. Each such move counts as a round. On a crash
// replay that reached a point of the uninterrupted execution, it stops the
// engine instead.
func (d *driver) hold(wake time.Time) bool {
	if d.point("hold", wake) {
		return false
	}
	d.x.mu.Lock()
	defer d.x.mu.Unlock()
	up := d.s.t.Upgrade
	if d.ds.Round+d.ds.Holds >= maxRounds {
		return false
	}
	if !d.ds.UpApplied && (!up.HasAfter || !d.upAt.After(wake)) {
		return false
	}
	for i, sd := range d.sigs {
		if !d.ds.Sent[i] && !sd.at.After(wake) {
			return false
		}
	}
	d.ds.Holds++
	d.clk.Set(wake)
	return true
}

// crashed reports whether err is the engine being dropped: at the crash
// point of a full replay, or where a replay reached a point of the
// uninterrupted execution (x.converged).
func (d *driver) crashed(err error) bool {
	if err == nil {
		return false
	}
	d.x.mu.Lock()
	defer d.x.mu.Unlock()
	return d.x.dead[d.inc] || errors.Is(err, errCrash)
}

// restart replaces a dropped engine with a new incarnation over the same
// store, as a restarted worker, and puts the loop where it goes on after
// the failed call: an upgrade whose rebind failed is applied again.
func (d *driver) restart() {
	d.inc++
	d.eng = d.s.engine(d.st, d.clk, d.inc, d.x, d.src)
	d.update(func(ds *driverState) {
		if ds.Call == callRebind {
			ds.UpApplied = false
		}
	})
}

// loop drives the run until it settles: it ends, is blocked, or waits for
// nothing the test brings. It returns early when a crash replay stopped.
func (d *driver) loop() error {
	ctx, s, x := d.ctx, d.s, d.x
	up := s.t.Upgrade
	for ; ; d.update(func(ds *driverState) { ds.Round++ }) {
		if d.ds.Round+d.ds.Holds > maxRounds {
			x.problems = append(x.problems, Failure{Pos: pos(s.t.Range), What: "run", Message: fmt.Sprintf("the run did not settle after %d rounds of virtual time", maxRounds)})
			return nil
		}
		now := d.clk.Now()
		for i, sd := range d.sigs {
			if d.ds.Sent[i] || sd.at.After(now) {
				continue
			}
			d.update(func(ds *driverState) { ds.Sent[i] = true })
			if _, err := d.eng.Signal(ctx, d.ds.ID, sd.sig.Name, mustJSON(jsonLike(sd.sig.Data))); err != nil {
				when := "when the run started"
				if sd.sig.HasAfter {
					when = fmt.Sprintf("%s after the run started", time.Duration(sd.sig.AfterMS)*time.Millisecond)
				}
				x.problems = append(x.problems, Failure{Pos: pos(sd.sig.Range), What: "signal " + sd.sig.Name,
					Message: fmt.Sprintf("the signal sent %s was refused: %v", when, err)})
			}
		}
		if !d.ds.UpApplied && ((up.HasAfter && !d.upAt.After(now)) || (!up.HasAfter && d.ds.Parked)) {
			d.update(func(ds *driverState) { ds.UpApplied, ds.Call = true, callRebind })
			if _, err := d.eng.StoreGraph(ctx, up.Graph); err != nil {
				x.problems = append(x.problems, Failure{Pos: pos(up.Range), What: "upgrade", Message: fmt.Sprintf("storing %s: %v", up.File, err)})
			} else if r, err := d.eng.Rebind(ctx, d.ds.ID); d.crashed(err) {
				if x.converged != nil {
					return nil
				}
				d.restart()
				continue
			} else if err != nil {
				x.problems = append(x.problems, Failure{Pos: pos(up.Range), What: "upgrade", Message: err.Error()})
			} else if r.Status != store.RunBlocked {
				d.update(func(ds *driverState) { ds.UpDecided = true }) // a MINOR or PATCH: nothing to decide
			}
		}
		d.update(func(ds *driverState) { ds.Call = callDrive })
		got, err := d.eng.Drive(ctx, d.ds.ID)
		if d.crashed(err) {
			if x.converged != nil {
				return nil
			}
			d.restart()
			continue
		}
		if err != nil {
			return fmt.Errorf("drive the run: %w", err)
		}
		if d.point("drive returned", time.Time{}) {
			return nil
		}
		if got.Status == store.RunBlocked && d.ds.UpApplied && !d.ds.UpDecided {
			d.update(func(ds *driverState) { ds.Call = callDecide })
			dec, err := d.eng.Decide(ctx, interp.DecideParams{RunID: d.ds.ID, Choice: interp.Choice(up.Choose), By: "flowrun test"})
			if d.crashed(err) {
				if x.converged != nil {
					return nil
				}
				d.restart()
				continue
			}
			if err != nil {
				x.problems = append(x.problems, Failure{Pos: pos(up.Range), What: "upgrade", Message: fmt.Sprintf("choose %s: %v", up.Choose, err)})
				return nil
			}
			d.update(func(ds *driverState) { ds.UpDecided, ds.ID = true, dec.Run.ID })
			x.mu.Lock()
			x.ord.runs[dec.Run.ID] = true
			x.mu.Unlock()
			continue
		}
		if got.Status.Terminal() || got.Status == store.RunBlocked {
			return nil
		}
		d.update(func(ds *driverState) { ds.Parked = true })
		// The run waits: move the clock to the next thing due.
		var next time.Time
		consider := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		at, ok, err := d.st.RunNextAvailable(ctx, d.ds.ID)
		if err != nil {
			return fmt.Errorf("read when the run is due: %w", err)
		}
		if ok && at.Before(Epoch().AddDate(50, 0, 0)) {
			consider(at)
		}
		for i, sd := range d.sigs {
			if !d.ds.Sent[i] {
				consider(sd.at)
			}
		}
		if !d.ds.UpApplied {
			if up.HasAfter {
				consider(d.upAt)
			} else {
				consider(d.clk.Now())
			}
		}
		if next.IsZero() {
			return nil // it waits for nothing the test brings
		}
		d.clk.Set(next)
	}
}

// unsent reports the signals the run settled before.
func (d *driver) unsent() {
	for i, sd := range d.sigs {
		if !d.ds.Sent[i] {
			d.x.problems = append(d.x.problems, Failure{Pos: pos(sd.sig.Range), What: "signal " + sd.sig.Name,
				Message: fmt.Sprintf("the signal was never sent: it is due %s after the run started, and the run settled before, after %s",
					time.Duration(sd.sig.AfterMS)*time.Millisecond, d.clk.Now().Sub(d.start))})
		}
	}
}

// point is called where the engine's next move depends only on the state
// compared here (crash.go): at a hold, and when Drive returned. The
// uninterrupted execution of a crash test records the state; a crash
// replay whose state is one recorded stops (true), its engine dropped.
func (d *driver) point(kind string, wake time.Time) bool {
	if d.rec == nil && d.base == nil {
		return false
	}
	d.x.mu.Lock()
	real := d.x.real
	d.x.mu.Unlock()
	if real && d.rec != nil {
		return false // its replays start from the start (crash.go)
	}
	key, err := d.key(kind, wake)
	if err != nil {
		d.x.mu.Lock()
		d.x.problems = append(d.x.problems, Failure{Pos: pos(d.s.t.Range), What: "crash", Message: err.Error()})
		d.x.mu.Unlock()
		return false
	}
	d.x.mu.Lock()
	defer d.x.mu.Unlock()
	if d.rec != nil {
		if _, ok := d.rec.points[key]; !ok {
			d.rec.points[key] = &point{commits: len(d.x.commits), side: maps.Clone(d.x.side)}
		}
		return false
	}
	p, ok := d.base.points[key]
	if !ok {
		return false
	}
	d.x.converged = p
	d.x.dead[d.inc] = true
	return true
}

// key is the digest of everything the rest of an execution depends on at
// a point: where the engine is (kind, the timer it holds for), the virtual
// clock, the store (sqlite.Store.Digest), the driver's loop (the run, the signals
// sent, the upgrade's progress), the mocks' results given so far and the
// random source's position. Left out: the rounds counted (they only bound
// a run that never settles) and the calls counted (crash.go adds them up).
func (d *driver) key(kind string, wake time.Time) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %d %d\n", kind, wake.UnixNano(), d.clk.Now().UnixNano())
	d.x.mu.Lock()
	fmt.Fprintf(h, "run %q sent %v up %v %v parked %v\n", d.ds.ID, d.ds.Sent, d.ds.UpApplied, d.ds.UpDecided, d.ds.Parked)
	for _, m := range []map[string]int{d.x.next, d.x.index} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(h, "%q=%d ", k, m[k])
		}
		h.Write([]byte("\n"))
	}
	for _, k := range slices.Sorted(maps.Keys(d.x.unmocked)) {
		fmt.Fprintf(h, "%q ", k)
	}
	d.x.mu.Unlock()
	fmt.Fprintf(h, "\nrand %x\n", d.src.state())
	if err := d.st.Digest(d.ctx, h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
