package feed_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

func TestLoadThenPollIncrementally(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	b.StoreHCL(t, fixture.Approve)
	src := feed.Local(b.Engine, "")

	empty, err := src.Load(ctx)
	if err != nil || empty.Cursor != 0 || len(empty.Runs) != 0 {
		t.Fatalf("empty store: %+v, %v", empty, err)
	}
	a := b.Drive(t, b.Start(t, "approve", map[string]any{"id": "A"}).ID)
	b.Clock.Advance(time.Second)
	other := b.Start(t, "approve", map[string]any{"id": "B"})

	snap, err := src.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := b.Store.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Cursor != all[len(all)-1].ID {
		t.Fatalf("cursor %d, want the newest event id %d", snap.Cursor, all[len(all)-1].ID)
	}
	if len(snap.Runs) != 2 || snap.Runs[0].ID != other.ID || snap.Runs[1].StepsTotal != 3 || snap.Runs[1].StepsDone != 1 {
		t.Fatalf("runs %+v", snap.Runs)
	}

	// Nothing happened: an empty poll.
	ch, err := src.Poll(ctx, snap.Cursor, feed.Watch{})
	if err != nil || len(ch.Events) != 0 || len(ch.Runs) != 0 || ch.Cursor != snap.Cursor {
		t.Fatalf("idle poll %+v, %v", ch, err)
	}

	// A signal touches run A only; only A is re-read, and the open run
	// comes back in full.
	if _, err := b.Engine.Signal(ctx, a.ID, "approval", json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	ch, err = src.Poll(ctx, snap.Cursor, feed.Watch{RunID: a.ID, StepKey: "prepare"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].ID != a.ID || ch.Open == nil || ch.Open.Run.ID != a.ID || len(ch.Open.Signals) != 1 {
		t.Fatalf("poll after signal: runs %+v open %+v", ch.Runs, ch.Open)
	}
	// The open run's graph is the engine's own, from its one cache: the
	// graph the engine's runs use, not a copy decoded by the feed.
	g, err := b.Engine.Graph(ctx, "approve", ch.Open.Run.GraphHash)
	if err != nil || ch.Open.Graph != g || ch.Open.GraphErr != nil {
		t.Fatalf("the open run's graph %p (%v) is not the engine's cached graph %p (%v)", ch.Open.Graph, ch.Open.GraphErr, g, err)
	}
	if len(ch.Attempts) != 1 || ch.Attempts[0].StepKey != "prepare" {
		t.Fatalf("attempts of the watched step: %+v", ch.Attempts)
	}
	if ch.Cursor <= snap.Cursor || ch.Events[0].ID <= snap.Cursor {
		t.Fatalf("cursor did not move past the new events: %d → %d", snap.Cursor, ch.Cursor)
	}

	// The run finishes elsewhere; the next poll sees it completed.
	b.Drive(t, a.ID)
	ch2, err := src.Poll(ctx, ch.Cursor, feed.Watch{})
	if err != nil || len(ch2.Runs) != 1 || ch2.Runs[0].Status != store.RunCompleted || ch2.Runs[0].StepsDone != 3 {
		t.Fatalf("poll after the run ended: %+v, %v", ch2.Runs, err)
	}
}

func TestLastEventIDBeyondFirstProbe(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	b.StoreHCL(t, fixture.Approve)
	src := feed.Local(b.Engine, "")
	// Enough runs for more than 1024 events, past the first probe.
	for i := 0; i < 260; i++ {
		b.Drive(t, b.Start(t, "approve", map[string]any{"id": string(rune('a'+i%26)) + string(rune('a'+i/26))}).ID)
	}
	all, err := b.Store.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) <= 1024 {
		t.Fatalf("only %d events; the test needs more than 1024", len(all))
	}
	got, err := src.LastEventID(ctx)
	if err != nil || got != all[len(all)-1].ID {
		t.Fatalf("LastEventID %d, %v; want %d", got, err, all[len(all)-1].ID)
	}
}

// TestSagaRowsAreNotSteps: a run that failed and compensated counts the
// steps of its graph only, not the saga's controller and compensation
// rows (store.GraphStep).
func TestSagaRowsAreNotSteps(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	b.StoreHCL(t, `workflow "saga" {
  version = "1.0.0"
  step "reserve" {
    set { ok = true }
    compensate {
      exec { command = ["true"] }
    }
  }
  step "charge" {
    depends_on = [step.reserve]
    exec { command = ["false"] }
  }
  step "ship" {
    depends_on = [step.charge]
    set { ok = true }
  }
}`)
	src := feed.Local(b.Engine, "")
	before, err := src.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := b.Drive(t, b.Start(t, "saga", nil).ID)
	if r.Status != store.RunFailed {
		t.Fatalf("run %s, want failed", r.Status)
	}
	// The run as a load lists it (the store's count) and as a poll
	// re-reads it (the feed's own count from its step rows).
	snap, err := src.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := src.Poll(ctx, before.Cursor, feed.Watch{})
	if err != nil || len(ch.Runs) != 1 {
		t.Fatalf("poll: %+v, %v", ch, err)
	}
	for how, got := range map[string]feed.RunRow{"load": snap.Runs[0], "poll": ch.Runs[0]} {
		if got.StepsTotal != 3 || got.StepsDone != 2 {
			t.Errorf("%s: steps %d/%d, want 2/3 (reserve and charge settled; ship never ran; the saga's rows are not steps)", how, got.StepsDone, got.StepsTotal)
		}
	}
}
