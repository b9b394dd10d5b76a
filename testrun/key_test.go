package testrun

import (
	"context"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// TestPointKeyReadsTheStore: the key a crash replay is compared by
// (driver.key) changes when the store holds another run, with the engine's
// place, the clock, the mocks and the random source unchanged, and is the
// same when nothing changed. A replay whose store diverged (a step's end
// written twice, another status) must not be taken for the uninterrupted
// run: TestDivergingReplayIsCaught diverges in the mocks' results too, so
// it passes with the store left out of the key.
func TestPointKeyReadsTheStore(t *testing.T) {
	ctx := context.Background()
	f, gs, dir := load(t, flaky, `test "t" {
  mock "pay" {
    results = [{ output = { stdout = "paid" } }]
  }
  expect { status = "completed" }
}`)
	sc, err := NewScratch(ctx, t.TempDir(), gs)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	s := &session{t: f.Tests[0], o: Options{Workflows: gs, WorkDir: dir}, sc: sc}
	st, _, done, err := sc.store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	clk := clock.NewFake(Epoch())
	d := newDriver(ctx, s, newExecution(s.t), st, clk, clk.Now())
	d.src = newPCG(1, 2)
	key := func() string {
		t.Helper()
		k, err := d.key("hold", Epoch().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if key() != k0 {
		t.Fatal("the key of an unchanged execution changed")
	}
	vs, err := st.VersionList(ctx, "f")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions of f: %v, %v", vs, err)
	}
	if _, err := st.RunInsert(ctx, store.RunInsertParams{ID: "run-x", Workflow: "f", Version: vs[0].Version, GraphHash: vs[0].Hash,
		Key: "run-x", Now: Epoch(), Events: []store.EventWrite{{Kind: "run_created"}}}); err != nil {
		t.Fatal(err)
	}
	if key() == k0 {
		t.Fatal("a run added to the store left the key as it was: the key does not read the store")
	}
}
