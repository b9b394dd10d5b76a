package interp

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// supervisor is the part of a runner that owns goroutines and reaches the
// world: the engine (its store, clock and options), the actions in flight
// (a flight per launch the scheduler decided), the wait group that counts
// their goroutines, the channel their results come back on, the channel
// that wakes the runner's wait, and the flags through which the pool, the
// heartbeat and the engine reach a runner from other goroutines. The
// scheduler sees none of it: the supervisor passes it what it needs (the
// instant, a cancel or stop, draining). Everything else in a runner is
// touched by the runner goroutine alone.
type supervisor struct {
	e *Engine
	// flights are the actions in flight, by step key (one per launch in
	// runState.inFlight); pending those whose running write is not yet
	// committed, started by hold (an exec) or start.
	flights map[string]*flight
	pending []*flight
	wg      sync.WaitGroup
	doneCh  chan flightResult
	nudgeCh chan struct{}
	// work hands a flight to an idle action goroutine (fly), of which
	// idle counts those waiting, at most maxIdleFliers; quit, closed by
	// waitFlights, ends them.
	work chan *flight
	idle atomic.Int32
	quit chan struct{}

	recheck   atomic.Bool // a signal or a child end may be waiting in the store
	lost      atomic.Bool // the lease was taken over
	cancelReq atomic.Bool // cancel requested
	drain     atomic.Bool // start no new action; park when the flights end
	halt      atomic.Bool // stop now: interrupt the flights and park
	// solo says the runner holds its run through its timers (hold.go) and
	// the run is the whole of its tree: the claim loop need not look for
	// other runs of the tree until the runner ends or starts a child.
	solo atomic.Bool
	// abandoned are the step keys of the flights abandonAll stopped: what
	// a lease loss reports as cut short.
	abandoned []string
}

// nudge wakes the runner's wait.
func (s *supervisor) nudge() {
	select {
	case s.nudgeCh <- struct{}{}:
	default:
	}
}

// goFlight runs the action in a goroutine that the wait group counts; its
// result goes to doneCh. A goroutine that ran an action before and waits
// for the next takes it: its stack has already grown to what an action
// needs (an http call runs deep), where a new goroutine would grow and
// copy its stack again on every step of a chain.
func (s *supervisor) goFlight(f *flight) {
	select {
	case s.work <- f:
		return
	default:
	}
	s.wg.Add(1)
	go s.fly(f)
}

// maxIdleFliers is how many action goroutines of a runner may wait for
// the next action: a chain needs one, and a worker holding many runners
// keeps no more than one waiting stack per runner (the collector shrinks
// a waiting goroutine's stack anyway); a fan-out's other goroutines end
// with their actions.
const maxIdleFliers = 1

// fly runs f, then the flights goFlight hands it, until there are enough
// idle goroutines or waitFlights closes quit.
func (s *supervisor) fly(f *flight) {
	defer s.wg.Done()
	for {
		s.doneCh <- f.do(s.e)
		if s.idle.Add(1) > maxIdleFliers {
			s.idle.Add(-1)
			return
		}
		select {
		case f = <-s.work:
			s.idle.Add(-1)
		case <-s.quit:
			s.idle.Add(-1)
			return
		}
	}
}

// waitFlights waits for every action goroutine to return, discarding
// results that were not absorbed (their attempts were already written as
// canceled or interrupted, or the lease is lost).
func (s *supervisor) waitFlights() {
	close(s.quit)
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	for {
		select {
		case <-s.doneCh:
		case <-done:
			return
		}
	}
}

// await blocks until an action's result arrives (got: res is it), the
// runner is nudged, or the timer set for next on clk fires (fired); a zero
// next sets no timer.
func (s *supervisor) await(clk clock.Clock, next time.Time) (res flightResult, got, fired bool) {
	var tc <-chan time.Time
	if !next.IsZero() {
		t := clk.NewTimer(next.Sub(clk.Now()))
		defer t.Stop()
		tc = t.C()
	}
	select {
	case res := <-s.doneCh:
		return res, true, false
	case <-s.nudgeCh:
		return flightResult{}, false, false
	case <-tc:
		return flightResult{}, false, true
	}
}

// ready returns an action's result that has arrived, without blocking
// (false: none).
func (s *supervisor) ready() (flightResult, bool) {
	select {
	case res := <-s.doneCh:
		return res, true
	default:
		return flightResult{}, false
	}
}
