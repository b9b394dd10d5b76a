package api

import (
	"context"
	"errors"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// StoreOutage is how long a reader that follows a run (logs -f, wait)
// reads again, every OutagePause, a store that fails (a database
// restarting or failing over) before it gives up: a worker's default
// lease, for which workers ride out the same failure.
const StoreOutage = 30 * time.Second

// OutagePause is how long such a reader waits between two reads.
const OutagePause = time.Second

// Outage follows a period of failed reads of a reader that rides out a
// failing store. The zero value is no outage.
type Outage struct{ since time.Time }

// Failed records a read that failed with err at now. It reports whether
// to read again after OutagePause: not for a run that is gone or a
// schema newer than this flowrun, nor once the store has failed for
// StoreOutage. first reports the first failure of a period; an error no
// wait mends (the run is gone, the schema is newer) is told as a first
// failure not read again, so that it is reported as it is.
func (o *Outage) Failed(err error, now time.Time) (again, first bool) {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrSchemaTooNew) {
		return false, true
	}
	if o.since.IsZero() {
		o.since = now
		return true, true
	}
	return now.Sub(o.since) < StoreOutage, false
}

// Answered ends a period of failed reads at now and returns how long it
// lasted (0 when there was none).
func (o *Outage) Answered(now time.Time) time.Duration {
	if o.since.IsZero() {
		return 0
	}
	d := now.Sub(o.since)
	o.since = time.Time{}
	return d
}

// Pause waits OutagePause on clk, or until ctx ends.
func (o *Outage) Pause(ctx context.Context, clk clock.Clock) {
	t := clk.NewTimer(OutagePause)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
}
