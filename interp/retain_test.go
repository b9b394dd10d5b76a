package interp

import (
	"errors"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
)

// prunedRecorder records RunsPruned reports.
type prunedRecorder struct {
	telemetry.Nop
	got map[string]int
}

func (p *prunedRecorder) RunsPruned(workflow string, n int) { p.got[workflow] += n }

// TestRetainPass: a workflow's own retention wins over the store's
// default; a workflow without one keeps its runs unless there is a
// default; runs younger than their retention and unfinished runs stay;
// the trees go in batches (a batch of 2 over 5 runs) and the Observer
// hears the counts.
func TestRetainPass(t *testing.T) {
	rec := &prunedRecorder{got: map[string]int{}}
	b := setup(t, func(o *Options) { o.Observer = rec })
	b.compile(`
workflow "short" {
  version   = "1.0.0"
  retention = "1h"
  step "s" {
    set { v = 1 }
  }
}
workflow "plain" {
  version = "1.0.0"
  step "s" {
    set { v = 1 }
  }
}
workflow "held" {
  version = "1.0.0"
  retention = "1h"
  step "w" {
    wait { signal = "go" }
  }
}`)
	var short, plain []string
	for range 5 {
		short = append(short, b.drive(b.start("short", nil).ID).ID)
		plain = append(plain, b.drive(b.start("plain", nil).ID).ID)
	}
	waiting := b.drive(b.start("held", nil).ID)
	wantStatus(t, waiting, store.RunWaiting)

	// Half an hour on: nothing is old enough.
	b.clk.Advance(30 * time.Minute)
	got, err := b.e.RetainPass(b.ctx, RetainOptions{Batch: 2})
	if err != nil || len(got) != 0 {
		t.Fatalf("RetainPass after 30m = %v, %v; want nothing pruned", got, err)
	}
	// Two hours on: short's runs go (in three batches), plain's stay
	// without a default, and the waiting run stays.
	b.clk.Advance(90 * time.Minute)
	got, err = b.e.RetainPass(b.ctx, RetainOptions{Batch: 2})
	if err != nil || got["short"] != 5 || len(got) != 1 {
		t.Fatalf("RetainPass after 2h = %v, %v; want short's 5 runs", got, err)
	}
	for _, id := range short {
		if _, err := b.st.RunGet(b.ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("run %s of short: %v, want it pruned", id, err)
		}
	}
	if _, err := b.st.RunGet(b.ctx, waiting.ID); err != nil {
		t.Fatalf("the waiting run: %v", err)
	}
	// A default of a day keeps plain's two-hour-old runs; one of an hour
	// does not.
	if got, err = b.e.RetainPass(b.ctx, RetainOptions{Default: 24 * time.Hour}); err != nil || len(got) != 0 {
		t.Fatalf("RetainPass with a day's default = %v, %v", got, err)
	}
	if got, err = b.e.RetainPass(b.ctx, RetainOptions{Default: time.Hour}); err != nil || got["plain"] != 5 {
		t.Fatalf("RetainPass with an hour's default = %v, %v; want plain's 5 runs", got, err)
	}
	for _, id := range plain {
		if _, err := b.st.RunGet(b.ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("run %s of plain: %v, want it pruned", id, err)
		}
	}
	if rec.got["short"] != 5 || rec.got["plain"] != 5 {
		t.Fatalf("RunsPruned reports = %v", rec.got)
	}
}
