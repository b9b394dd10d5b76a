// Package clock owns flowrun's notion of time. Everything that needs the
// time or a timer takes a Clock, so tests drive timers, backoff and
// deadlines on a Fake clock and a 10-minute sleep is tested in
// milliseconds.
//
// Only Real reads the wall clock: no other package's code may call
// time.Now, time.Since, time.Until, time.Sleep or the timers (time.After,
// time.Tick, time.NewTimer, time.NewTicker, time.AfterFunc) directly.
// Tests and test-only packages (store/storetest) may; the layering
// package's TestOnlyClockReadsTheWallClock holds the rule.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in a goroutine of its own after d, unless the
	// returned timer is stopped first (its C is nil).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped
	// the timer before it fired.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

// Now returns the current time.
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a real timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// AfterFunc returns a real timer that calls f.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Fake is a clock that moves only when told to. It is safe for concurrent
// use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a fake clock set at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	return t
}

// AfterFunc returns a timer that calls f, in a goroutine of its own, when
// the fake time reaches now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), fn: fn}
	if d <= 0 {
		t.fired = true
		go fn()
		return t
	}
	f.timers = append(f.timers, t)
	return t
}

// Advance moves the time forward by d and fires every timer that is due, in
// order of their deadlines.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	var due, keep []*fakeTimer
	for _, t := range f.timers {
		if !t.at.After(now) {
			due = append(due, t)
		} else {
			keep = append(keep, t)
		}
	}
	f.timers = keep
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.fired = true
		if t.fn != nil {
			go t.fn()
			continue
		}
		t.c <- t.at
	}
	f.mu.Unlock()
}

// Set moves the time to t (forward only) and fires due timers.
func (f *Fake) Set(t time.Time) {
	d := t.Sub(f.Now())
	if d > 0 {
		f.Advance(d)
	}
}

// Pending returns the number of timers that have not fired or stopped, so a
// test can wait until the code under test is parked on a timer.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

type fakeTimer struct {
	f     *Fake
	at    time.Time
	c     chan time.Time // nil for AfterFunc
	fn    func()         // AfterFunc's
	fired bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.fired {
		return false
	}
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			return true
		}
	}
	return false
}
