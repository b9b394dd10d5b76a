package interp

import (
	"context"
	"strings"

	"github.com/flowrun/flowrun/store"
)

// maxWaiterDepth is how deep SignalWaiter looks among child runs.
const maxWaiterDepth = 8

// SignalWaiter is the run that waits for a signal on run's behalf, with
// the signal's name: run itself when it is parked on one, else the first
// waiting child run (depth first, at most maxWaiterDepth levels down)
// parked on one. It reports false when there is none or the children
// cannot be read: it serves hints, which then say less.
func (e *Engine) SignalWaiter(ctx context.Context, run store.Run) (store.Run, string, bool) {
	return e.signalWaiter(ctx, run, maxWaiterDepth)
}

func (e *Engine) signalWaiter(ctx context.Context, run store.Run, depth int) (store.Run, string, bool) {
	if name, ok := strings.CutPrefix(run.WaitReason, "signal:"); ok {
		return run, name, true
	}
	if depth == 0 || !strings.HasPrefix(run.WaitReason, "child") {
		return store.Run{}, "", false
	}
	kids, err := e.st.RunChildren(ctx, run.ID)
	if err != nil {
		return store.Run{}, "", false
	}
	for _, k := range kids {
		if k.Status != store.RunWaiting {
			continue
		}
		if w, name, ok := e.signalWaiter(ctx, k, depth-1); ok {
			return w, name, true
		}
	}
	return store.Run{}, "", false
}
