package testrun

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// maxCrashFailures is how many failing commit points a test reports
// before it stops replaying.
const maxCrashFailures = 3

// Crash replays (spec/testing.md §6) without running every prefix again.
//
// Replay n is the execution in which the engine is dropped right after
// commit n and a new engine resumes the run from the store. Up to that
// instant it is the uninterrupted execution itself, so it is not run
// again: the uninterrupted execution takes a checkpoint when it is about
// to make each commit n+1 (execution.onCommit), a copy of the store as
// commit n left it (what a process killed then leaves) together with what
// the test held at that instant: the mocks' calls and the result each
// call took, the driver loop's place, the virtual clock, the random
// source's position. Replay n opens that copy, starts a new engine
// incarnation on it (whose process id does not exist, so it takes the
// dead one's lease over at once, as a restarted worker does), and resumes
// the loop as it resumed after the dropped engine's failed call. Its
// engine draws from the random stream where the dropped one left it.
//
// Stopping early. The uninterrupted execution also records a digest of its
// whole state (driver.key: the store less what names the process or is
// history, the loop, the clock, the mocks' results, the random source)
// at each point where the engine's next move is decided only by that
// state: a hold (the runner has committed all it decided, has no action
// in flight and nothing to launch, and waits for one timer: its state in
// memory is the run's rows it committed, which interp keeps as a copy of
// what it would rebuild from the store), and each return of Drive (the
// next Drive rebuilds from the store). When the resumed engine of a
// replay reaches a point whose digest is one recorded (the same kind of
// point, timer, clock, store, loop, mocks and random position), every
// input of what follows is that of the uninterrupted execution at the
// recorded point, and the engine, the mocks and the virtual clock are
// deterministic functions of those inputs, so the rest of the replay is
// the rest of the uninterrupted execution: it ends with its status and
// outputs, and its mocks are called as often from there on. The replay
// stops there, and its side-effect check adds the uninterrupted
// execution's calls after the point to the replay's own. A replay that
// diverges (an action run twice leaves a second attempt, a mock answers a
// later result, the run takes another branch) has a different digest at
// every later point and runs to its end, checked as before. So each crash
// point is still a real drop and rebuild, and the work per replay is what
// the crash changes, not the length of the run.

// record is what the uninterrupted execution of a crash test keeps for
// its replays.
type record struct {
	dir, name string
	// checkpoints[n-1] is where replay n starts.
	checkpoints []*checkpoint
	// points are the states the execution passed, by digest.
	points map[string]*point
	// finalSide and attempts are the mocked side effects called and the
	// attempts recorded per run id + "/" + step key at its end.
	finalSide, attempts map[string]int
}

// point is a state of the uninterrupted execution: how many commits it
// had applied and the side effects it had called by then.
type point struct {
	commits int
	side    map[string]int
}

// checkpoint is the uninterrupted execution when commit applied was the
// last one it made.
type checkpoint struct {
	applied                  int
	path                     string
	now                      time.Time
	rand                     []byte
	ds                       driverState
	calls, side, index, next map[string]int
	unmocked                 map[string]bool
}

// close removes the checkpoints' files no replay used.
func (r *record) close() {
	if r == nil {
		return
	}
	for _, cp := range r.checkpoints {
		removeDB(cp.path)
	}
}

// checkpoint takes the checkpoint after the commit applied (called with
// x.mu held, before the next commit).
func (d *driver) checkpoint(applied int) error {
	if applied == 0 || applied <= len(d.rec.checkpoints) || d.x.real {
		return nil // a real action ran: the replays start from the start
	}
	path := filepath.Join(d.rec.dir, fmt.Sprintf("%s-after-%d.db", d.rec.name, applied))
	if err := d.st.Snapshot(d.ctx, path); err != nil {
		return err
	}
	x := d.x
	d.rec.checkpoints = append(d.rec.checkpoints, &checkpoint{applied: applied, path: path, now: d.clk.Now(), rand: d.src.state(),
		ds: d.ds.clone(), calls: maps.Clone(x.calls), side: maps.Clone(x.side), index: maps.Clone(x.index), next: maps.Clone(x.next),
		unmocked: maps.Clone(x.unmocked)})
	return nil
}

// finish takes the checkpoint after the last commit and reads what the
// replays that stop early are completed with.
func (d *driver) finish() error {
	d.x.mu.Lock()
	err := d.checkpoint(len(d.x.commits))
	d.rec.finalSide = maps.Clone(d.x.side)
	d.x.mu.Unlock()
	if err != nil {
		return err
	}
	d.rec.attempts, err = attemptCounts(d.ctx, d.st)
	return err
}

// crash runs the test again once per commit point of the uninterrupted
// execution base. Each replay must end with base's status and outputs,
// and run no mocked side effect more often than the store recorded
// attempts of it. It returns the replays run, how many of them stopped
// early, and the failures, each naming its commit point.
func (s *session) crash(ctx context.Context, base *execution, rec *record) (int, int, []Failure) {
	var fails []Failure
	replays, stopped := 0, 0
	total := len(base.commits)
	var rs *replayStore
	if !base.real {
		var err error
		if rs, err = s.openReplayStore(ctx, rec); err != nil {
			return 0, 0, []Failure{{Pos: pos(s.t.Range), What: "crash", Message: err.Error()}}
		}
		defer rs.close()
	}
	for n := 1; n <= total; n++ {
		point := fmt.Sprintf("crash after commit %d of %d (%s)", n, total, base.commits[n-1])
		var x *execution
		var err error
		switch {
		case base.real:
			// A real program or request changed the world outside the
			// store, which no checkpoint holds: run from the start.
			x, _, err = s.execute(ctx, false, n)
		case n > len(rec.checkpoints) || rec.checkpoints[n-1].applied != n:
			err = fmt.Errorf("no checkpoint was taken there")
		default:
			x, err = s.replay(ctx, base, rec, rec.checkpoints[n-1], rs)
		}
		replays++
		if err != nil {
			fails = append(fails, Failure{Pos: pos(s.t.Range), What: "crash", Message: fmt.Sprintf("%s: %v", point, err)})
		} else {
			if x.converged != nil {
				stopped++
			}
			var f []Failure
			if x.run.Status != base.run.Status {
				f = append(f, Failure{Pos: pos(s.t.Range), What: "crash status", Expected: string(base.run.Status), Actual: string(x.run.Status) + errText(x.run.Error), Message: point})
			}
			if !sameJSON(x.run.Outputs, base.run.Outputs) {
				f = append(f, Failure{Pos: pos(s.t.Range), What: "crash outputs", Expected: string(base.run.Outputs), Actual: string(x.run.Outputs), Message: point})
			}
			for _, p := range x.problems {
				// The uninterrupted run had none of these (it passed):
				// the crash caused them.
				if p.What != "crash" {
					p.What = "crash " + p.What
				}
				p.Message = point + ": " + p.Message
				f = append(f, p)
			}
			fails = append(fails, f...)
		}
		if len(fails) >= maxCrashFailures {
			break
		}
	}
	return replays, stopped, fails
}

// replayStore is the scratch store the replays of a test share: each
// restores its checkpoint into it (opening a store per replay costs more
// than the replay).
type replayStore struct {
	st   *sqlite.Store
	done func()
}

func (s *session) openReplayStore(ctx context.Context, rec *record) (*replayStore, error) {
	if len(rec.checkpoints) == 0 {
		return nil, fmt.Errorf("no checkpoint was taken")
	}
	path := filepath.Join(rec.dir, rec.name+"-replay.db")
	b, err := os.ReadFile(rec.checkpoints[0].path)
	if err != nil {
		return nil, fmt.Errorf("read a checkpoint: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("write the replay store: %w", err)
	}
	st, done, err := openScratch(ctx, path)
	if err != nil {
		return nil, err
	}
	return &replayStore{st: st, done: done}, nil
}

func (r *replayStore) close() {
	r.done()
}

// replay resumes the run from checkpoint cp with a new engine, on rs.
func (s *session) replay(ctx context.Context, base *execution, rec *record, cp *checkpoint, rs *replayStore) (*execution, error) {
	if err := rs.st.Restore(ctx, cp.path); err != nil {
		return nil, err
	}
	removeDB(cp.path)
	st := rs.st
	var err error
	x := newExecution(s.t)
	x.calls, x.side, x.index, x.next = maps.Clone(cp.calls), maps.Clone(cp.side), maps.Clone(cp.index), maps.Clone(cp.next)
	x.unmocked = maps.Clone(cp.unmocked)
	x.commits = slices.Clone(base.commits[:cp.applied])
	clk := clock.NewFake(cp.now)
	d := newDriver(ctx, s, x, st, clk, Epoch())
	d.ds, d.base = cp.ds.clone(), rec
	x.ord.runs[d.ds.ID] = true
	if d.src, err = restorePCG(cp.rand); err != nil {
		return nil, err
	}
	// The engine of the checkpoint (incarnation 0) is gone: the loop goes
	// on as after its failed call, with a new one.
	d.restart()
	d.ds.Round++
	if err := d.loop(); err != nil {
		return nil, err
	}
	if dbgReplay != nil {
		dbgReplay(cp.applied, x.converged != nil, len(x.commits))
	}
	if p := x.converged; p != nil {
		// From p on the replay is the uninterrupted execution: its end,
		// and its side effects after p, are base's.
		x.run = base.run
		for _, k := range slices.Sorted(maps.Keys(keysOf(x.side, rec.finalSide))) {
			n := x.side[k] + rec.finalSide[k] - p.side[k]
			if n > rec.attempts[k] {
				x.problems = append(x.problems, sideFailure(k, n, rec.attempts[k]))
			}
		}
		return x, nil
	}
	d.unsent()
	if x.run, err = st.RunGet(ctx, d.ds.ID); err != nil {
		return nil, fmt.Errorf("read the run: %w", err)
	}
	if err := x.checkSide(ctx, st); err != nil {
		return nil, err
	}
	return x, nil
}

func keysOf(ms ...map[string]int) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}

func errText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return " " + string(raw)
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) > 0 {
		_ = json.Unmarshal(a, &x)
	}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &y)
	}
	return reflect.DeepEqual(x, y)
}

var dbgReplay func(int, bool, int)

// attemptCounts reads how many attempts the store recorded per run id +
// "/" + step key, over every run of the scratch store (the tested run and
// the children it started).
func attemptCounts(ctx context.Context, st store.Store) (map[string]int, error) {
	runs, err := st.RunList(ctx, store.RunListParams{})
	if err != nil {
		return nil, fmt.Errorf("count the attempts: %w", err)
	}
	out := map[string]int{}
	for _, r := range runs {
		as, err := st.AttemptList(ctx, r.ID, "")
		if err != nil {
			return nil, fmt.Errorf("count the attempts of run %s: %w", r.ID, err)
		}
		for _, a := range as {
			out[a.RunID+"/"+a.StepKey]++
		}
	}
	return out, nil
}
