package interp

import (
	"context"

	"github.com/flowrun/flowrun/store"
)

// register keeps the worker's row in the store's registry of workers
// (store.Workers) while its loop runs: a beat at once, then one every
// Heartbeat, each live for a lease (a worker not seen for a lease is gone,
// as its runs then are), and the row deleted when stop is closed by a
// graceful end. A failed beat is left to the next one: the registry only
// informs (`flowrun workers`, the hints of signal and retry); the claim
// loop meets and reports store faults itself.
func (w *Worker) register(ctx context.Context, stop <-chan struct{}) {
	started := w.e.clk.Now()
	info := func() store.WorkerInfo {
		return store.WorkerInfo{ID: w.p.owner.String(), Host: w.p.owner.Host, PID: w.p.owner.PID,
			Version: w.version, Concurrency: w.p.slots, Held: w.p.count(), StartedAt: started}
	}
	for {
		_ = w.e.st.WorkerBeat(ctx, store.WorkerBeatParams{Info: info(), Now: w.e.clk.Now(), TTL: w.e.opts.LeaseFor})
		t := w.e.clk.NewTimer(w.e.opts.Heartbeat)
		select {
		case <-t.C():
		case <-stop:
			t.Stop()
			_ = w.e.st.WorkerGone(ctx, w.p.owner.String())
			return
		}
	}
}

// LiveWorkers returns the workers of the store's registry that beat within
// their lease: none means no process will claim a run that becomes due.
func (e *Engine) LiveWorkers(ctx context.Context) ([]store.WorkerInfo, error) {
	ws, err := e.WorkerList(ctx)
	if err != nil {
		return nil, err
	}
	live := ws[:0]
	for _, w := range ws {
		if w.Live {
			live = append(live, w)
		}
	}
	return live, nil
}

// WorkerList returns every worker of the store's registry, live ones
// first, gone ones (not seen for a lease) after them.
func (e *Engine) WorkerList(ctx context.Context) ([]store.WorkerInfo, error) {
	return e.st.WorkerList(ctx, e.clk.Now())
}
