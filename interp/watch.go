package interp

import (
	"context"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// WaitForChange waits until it is time to read the store again for
// someone following it (flowtui, flowrun logs -f): every, or sooner, when
// the store tells of a commit (SQLite on Linux, Postgres; see store.WorkWaiter),
// but never before gap has passed, so a busy store is read at most once
// per gap. It returns ctx.Err() when ctx ends first, else nil.
func WaitForChange(ctx context.Context, clk clock.Clock, st store.Store, gap, every time.Duration) error {
	t := clk.NewTimer(every)
	defer t.Stop()
	ww, ok := st.(store.WorkWaiter)
	if !ok || gap >= every {
		select {
		case <-t.C():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	g := clk.NewTimer(gap)
	defer g.Stop()
	select {
	case <-g.C():
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	note, stop := listen(ctx, ww)
	defer stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case err := <-note:
		if err == nil {
			return nil
		}
	}
	// The store cannot tell of commits: wait out the interval.
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
