package root

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

// TestDecideParkedRun: a run parked on its signal, bound to 1.0.0 when
// 2.0.0 (a MAJOR change) is stored, is offered the decision as a blocked
// one is (interp.Engine.OfferDecision; issue 24: flowtui said "only a
// blocked run needs a version decision"); a confirmed migrate blocks and
// decides it through the engine.
func TestDecideParkedRun(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	b.StoreHCL(t, shipV1)
	parked := b.Drive(t, b.Start(t, "ship", nil).ID)
	b.Clock.Advance(time.Second)
	b.StoreHCL(t, strings.NewReplacer("1.0.0", "2.0.0", `"go"`, `"start"`).Replace(shipV1))
	if r, _ := b.Store.RunGet(ctx, parked.ID); r.Status != store.RunWaiting {
		t.Fatalf("setup: the run is %s, want waiting", r.Status)
	}
	m := newRoot(t, feed.Local(b.Engine, "tui (user test)"), b)
	m = press(t, m, "d")
	v := boxed(m.View())
	if m.decide == nil || !strings.Contains(v, "is waiting and can be decided now") || !strings.Contains(v, "Changes from 1.0.0 to 2.0.0") {
		t.Fatalf("d on a parked run of an older MAJOR does not offer the decision:\n%s", m.View())
	}
	m = press(t, m, "n", "y")
	if v := boxed(m.View()); !strings.Contains(v, "Run "+parked.ID+": decided new.") {
		t.Fatalf("no report of the decision:\n%s", m.View())
	}
	if r, _ := b.Store.RunGet(ctx, parked.ID); r.Status != store.RunCanceled {
		t.Fatalf("after new the old run is %s, want canceled", r.Status)
	}
}
