package interp

import (
	"encoding/json"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// runState is a run's state rebuilt from the store (rebuild) as plain data,
// and kept up to date as the scheduler decides: the rows of its step keys
// and their decoded State, the attempt numbers and retry budgets, the
// results later expressions read, the pending signals and the child runs
// waited for, the attempts in flight. It starts no goroutine and reads no
// clock.
type runState struct {
	rows     map[string]*store.Step
	states   map[string]*rowState
	lastAtt  map[string]int // highest attempt number per step key
	failures map[string]int // failed attempts per step key (the retry budget)
	results  map[string]expr.StepResult
	noted    map[string]bool      // foreach items whose end was handled
	fe       map[string]*feCursor // foreach steps in progress (foreach.go)
	signals  []store.Signal       // pending signals, oldest first
	children map[string]store.Run
	// inFlight holds the attempts launched (their running write decided)
	// and not yet ended or stopped, by step key: the run's parallel limit
	// counts them. The supervisor keeps a flight for each.
	inFlight map[string]*launch
	// fresh holds the output of a step completed in this process, by
	// name, from its write (unitDoneClean) until settle reads it.
	fresh map[string]any

	// settled counts the leading steps of the graph (in its order) that
	// have ended and been settled: decide starts after them.
	settled int
	keep    *keep // which finished steps later decisions read (keep.go)
	// top holds, by graph position, the row of each step's top-level key
	// (the same pointer as rows[name]; nil when it has none), and waitOn,
	// by graph position, one plus the position of a need that was not
	// finished when the step could not begin (0: not known). With them
	// decide passes over a step that still waits on an unfinished need
	// without a map lookup (schedule.go, waiting).
	top    []*store.Step
	waitOn []int32
}

// state returns the decoded State of a step key (empty when none).
func (s *runState) state(key string) *rowState {
	if st := s.states[key]; st != nil {
		return st
	}
	st := &rowState{}
	if row := s.rows[key]; row != nil && len(row.State) > 0 {
		_ = json.Unmarshal(row.State, st)
	}
	s.states[key] = st
	return st
}

// stale reports whether a loaded row is an until iteration that no later
// decision reads: finished, and older than the iteration before its loop's
// current one. The controller's row must already be in rows.
func (s *runState) stale(row *store.Step) bool {
	if row.Iteration < 0 || !row.Status.Terminal() {
		return false
	}
	c := s.rows[store.StepKey(row.Step, row.Index, -1)]
	if c == nil {
		return false
	}
	return row.Iteration < s.state(c.Key).Iteration-1
}

// nextWake returns the earliest WakeAt of a waiting step key, or the run's
// deadline when that is earlier (zero when neither), and whether something
// waits on a signal or a child. It is a pure function of the state and
// the deadline passed in: the caller turns the instant into a timer.
func (s *runState) nextWake(deadline time.Time) (time.Time, bool) {
	var next time.Time
	external := false
	for _, row := range s.rows {
		if row.Status != store.StepWaiting {
			continue
		}
		st := s.state(row.Key)
		if st.Wait == waitSignal || st.Wait == waitChild {
			external = true
		}
		if !row.WakeAt.IsZero() && (next.IsZero() || row.WakeAt.Before(next)) {
			next = row.WakeAt
		}
	}
	if !deadline.IsZero() && (next.IsZero() || deadline.Before(next)) {
		next = deadline
	}
	return next, external
}

// rowsOf returns the rows of a step: its own and its items' and
// iterations'.
func (s *runState) rowsOf(name string) []*store.Step {
	var out []*store.Step
	for _, row := range s.rows {
		if row.Step == name {
			out = append(out, row)
		}
	}
	return out
}

// parkWake decides where a run with nothing to execute now parks
// (invariant 7): at the earliest WakeAt of its waiting step keys, looked at
// step by step in the order of steps, or now plus farFuture when none has
// one, brought forward to the deadline (zero: none); with the wait reason
// of the key that set it (retry, timer, child, signal:NAME,
// breaker:NAME, from breaker(step)), or of a waiting key with no WakeAt
// while nothing has one. It returns false when no key waits: nothing can
// make progress. It is pure: now is passed in.
func (s *runState) parkWake(steps []*graph.Step, breaker func(step string) string, now, deadline time.Time) (avail time.Time, reason string, waiting bool) {
	for _, st := range steps {
		for _, row := range s.rowsOf(st.Name) {
			if row.Status != store.StepWaiting {
				continue
			}
			waiting = true
			rs := s.state(row.Key)
			why := map[string]string{waitRetry: "retry", waitSleep: "timer", waitInterval: "timer", waitChild: "child", waitSignal: "signal:" + rs.Signal,
				waitBreaker: "breaker:" + breaker(row.Step)}[rs.Wait]
			if !row.WakeAt.IsZero() && (avail.IsZero() || row.WakeAt.Before(avail)) {
				avail, reason = row.WakeAt, why
			}
			if reason == "" || (row.WakeAt.IsZero() && avail.IsZero()) {
				reason = why
			}
		}
	}
	if !waiting {
		return time.Time{}, "", false
	}
	if avail.IsZero() {
		avail = now.Add(farFuture)
	}
	if !deadline.IsZero() && deadline.Before(avail) {
		avail = deadline
	}
	return avail, reason, true
}
