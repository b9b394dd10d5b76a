package clock

import (
	"testing"
	"time"
)

// TestFakeAfterFunc: a fake AfterFunc runs its function when the time
// reaches its deadline, not before, and never once stopped.
func TestFakeAfterFunc(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ran := make(chan time.Time, 2)
	f.AfterFunc(time.Second, func() { ran <- f.Now() })
	stopped := f.AfterFunc(time.Second, func() { ran <- time.Time{} })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending AfterFunc reported it had fired")
	}
	if f.Pending() != 1 {
		t.Fatalf("%d timers pending, want 1", f.Pending())
	}
	f.Advance(999 * time.Millisecond)
	select {
	case <-ran:
		t.Fatal("the function ran before its time")
	case <-time.After(20 * time.Millisecond):
	}
	f.Advance(time.Millisecond)
	select {
	case at := <-ran:
		if at.IsZero() || !at.Equal(time.Unix(1, 0)) {
			t.Fatalf("ran at %v (the stopped one?), want the 1 s mark", at)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the function did not run when its time came")
	}
	select {
	case <-ran:
		t.Fatal("a stopped AfterFunc ran")
	case <-time.After(20 * time.Millisecond):
	}
}
