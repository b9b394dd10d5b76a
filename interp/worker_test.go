package interp

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// claimFails is a store whose claims fail with err.
type claimFails struct {
	store.Store
	err error
}

func (s claimFails) RunClaim(context.Context, store.RunClaimParams) ([]store.Run, error) {
	return nil, s.err
}

// TestWorkerDiesOnStoreErrors: a worker whose claims keep failing for a
// lease period ends its loop (Done) and reports why (Err); a newer schema
// ends it at once. Stop then returns the same error.
func TestWorkerDiesOnStoreErrors(t *testing.T) {
	t.Run("schema too new", func(t *testing.T) {
		b := setup(t)
		e := New(claimFails{b.st, fmt.Errorf("claim: %w", store.ErrSchemaTooNew)}, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1}})
		w := NewWorker(e, WorkerOptions{})
		if err := w.Start(b.ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second): // safety net only
			t.Fatal("the worker did not stop on a schema from a newer flowrun")
		}
		if err := w.Err(); !errors.Is(err, store.ErrSchemaTooNew) {
			t.Fatalf("Err() = %v, want store.ErrSchemaTooNew", err)
		}
	})
	t.Run("failing for a lease period", func(t *testing.T) {
		b := setup(t)
		broken := errors.New("disk I/O error")
		e := New(claimFails{b.st, broken}, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1}, LeaseFor: 30 * time.Second, Poll: time.Second})
		w := NewWorker(e, WorkerOptions{})
		if err := w.Start(b.ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second) // safety net only
		for stopped := false; !stopped; {
			select {
			case <-w.Done():
				stopped = true
			default:
				if b.clk.Now().Sub(t0) > time.Minute {
					t.Fatalf("the worker still runs %s after its claims began to fail", b.clk.Now().Sub(t0))
				}
				if time.Now().After(deadline) {
					t.Fatal("the worker did not stop")
				}
				if b.clk.Pending() > 0 {
					b.clk.Advance(time.Second)
				}
				time.Sleep(time.Millisecond)
			}
		}
		if got := b.clk.Now().Sub(t0); got < 30*time.Second {
			t.Fatalf("the worker gave up after %s, before a lease period (30s) of failures", got)
		}
		if err := w.Err(); !errors.Is(err, broken) {
			t.Fatalf("Err() = %v, want the claim error", err)
		}
		if err := w.Stop(b.ctx); !errors.Is(err, broken) {
			t.Fatalf("Stop() = %v, want the claim error", err)
		}
	})
}
