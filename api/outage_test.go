package api

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestOutage: a failing store is read again for StoreOutage from its
// first failure, which is told once; an answer starts a new period; a run
// that is gone or a newer schema is never read again.
func TestOutage(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	down := errors.New("connection refused")
	var o Outage
	step := func(err error, at time.Duration, wantAgain, wantFirst bool) {
		t.Helper()
		if again, first := o.Failed(err, t0.Add(at)); again != wantAgain || first != wantFirst {
			t.Fatalf("Failed(%v) at +%s = %v, %v; want %v, %v", err, at, again, first, wantAgain, wantFirst)
		}
	}
	step(down, 0, true, true)
	step(down, StoreOutage-time.Millisecond, true, false)
	step(down, StoreOutage, false, false)
	if d := o.Answered(t0.Add(StoreOutage + time.Second)); d != StoreOutage+time.Second {
		t.Fatalf("Answered = %s, want the period's length", d)
	}
	if d := o.Answered(t0.Add(StoreOutage + 2*time.Second)); d != 0 {
		t.Fatalf("Answered with no outage = %s, want 0", d)
	}
	step(down, time.Hour, true, true) // a new period
	step(fmt.Errorf("run x: %w", store.ErrNotFound), time.Hour+time.Second, false, true)
	step(store.ErrSchemaTooNew, time.Hour+2*time.Second, false, true)
}
