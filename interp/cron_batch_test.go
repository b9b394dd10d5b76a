package interp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// fireCounter counts the store's fire transactions.
type fireCounter struct {
	store.Store
	single, batches, batched atomic.Int64
}

func (c *fireCounter) ScheduleFire(ctx context.Context, p store.ScheduleFireParams) (store.ScheduleFireResult, error) {
	c.single.Add(1)
	return c.Store.ScheduleFire(ctx, p)
}

func (c *fireCounter) ScheduleFireBatch(ctx context.Context, ps []store.ScheduleFireParams) ([]store.ScheduleFireOutcome, error) {
	c.batches.Add(1)
	c.batched.Add(int64(len(ps)))
	return c.Store.ScheduleFireBatch(ctx, ps)
}

// TestSchedulerFiresInBatches: one pass over 300 schedules due at the same
// slot fires them in batches of scheduleFireBatch, one transaction each,
// not one transaction per slot, and starts one run per schedule.
func TestSchedulerFiresInBatches(t *testing.T) {
	const n = 300
	cnt := &fireCounter{}
	b := setup(t)
	cnt.Store = b.st
	b.e = New(cnt, Options{Clock: b.clk, Owner: store.Owner{Host: "h", PID: 1, Worker: "t"}, ParkWait: -1})
	var src strings.Builder
	src.WriteString("workflow \"many\" {\n  version = \"1.0.0\"\n  input \"at\" { type = string }\n")
	for i := range n {
		fmt.Fprintf(&src, "  schedule \"s%03d\" {\n    every = \"1m\"\n    overlap = \"allow\"\n    inputs = { at = \"{{ schedule.time }}\" }\n  }\n", i)
	}
	src.WriteString("  step \"s\" {\n    exec { command = [\"true\"] }\n  }\n}\n")
	b.clk.Set(time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC))
	g := b.compile(src.String())[0]
	if _, err := b.e.ActivateSchedules(b.ctx, g, "/work/dir"); err != nil {
		t.Fatal(err)
	}
	b.clk.Advance(31 * time.Second)
	started, err := b.e.FireDue(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if started != n {
		t.Fatalf("started %d runs, want %d", started, n)
	}
	want := int64((n + scheduleFireBatch - 1) / scheduleFireBatch)
	if s, bs, bd := cnt.single.Load(), cnt.batches.Load(), cnt.batched.Load(); s != 0 || bd != n || bs != want {
		t.Fatalf("%d single fires, %d batches of %d slots: want none single and %d batches of %d slots", s, bs, bd, want, n)
	}
	runs, err := b.st.RunList(b.ctx, store.RunListParams{Workflow: "many"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		t.Fatalf("%d runs, want %d", len(runs), n)
	}
	// The next pass at the same instant finds nothing due.
	if started, err := b.e.FireDue(b.ctx); err != nil || started != 0 {
		t.Fatalf("second pass: started %d, %v; want 0, nil", started, err)
	}
}
