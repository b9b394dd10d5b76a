package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
	"github.com/flowrun/flowrun/tui/feed"
)

const deciderV1 = `workflow "ship" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}`

// TestDecider blocks a parked run with a new MAJOR version and decides it
// through the TUI's Decider: the first decision is carried out and
// recorded, a second one is refused with the engine's sentence naming the
// first.
func TestDecider(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "flowrun.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := interp.New(st, interp.Options{ParkWait: -1})
	store1 := func(src string) {
		m, diags := lang.LoadFile("w.hcl", []byte(src))
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		if _, err := eng.StoreGraph(ctx, m.Workflows[0].Graph); err != nil {
			t.Fatal(err)
		}
	}
	store1(deciderV1)
	run, _, err := eng.StartRun(ctx, interp.StartParams{Workflow: "ship"})
	if err != nil {
		t.Fatal(err)
	}
	if run, err = eng.Drive(ctx, run.ID); err != nil || run.Status != store.RunWaiting {
		t.Fatalf("drive: %v %s", err, run.Status)
	}
	store1(strings.Replace(strings.Replace(deciderV1, "1.0.0", "2.0.0", 1), `"go"`, `"start"`, 1))
	if run, err = eng.Rebind(ctx, run.ID); err != nil || run.Status != store.RunBlocked {
		t.Fatalf("rebind: %v %s", err, run.Status)
	}
	d := decider{eng: eng, by: "tui (user test)"}
	if err := d.Decide(ctx, run.ID, "1.0.0", feed.ChoiceOld); err != nil {
		t.Fatalf("decide old: %v", err)
	}
	if got, _ := st.RunGet(ctx, run.ID); got.Status != store.RunPending || got.Version != "1.0.0" {
		t.Fatalf("after old: %s %s", got.Status, got.Version)
	}
	// A second decision from the same screen (another operator's) loses
	// and names the first one.
	err = d.Decide(ctx, run.ID, "1.0.0", feed.ChoiceMigrate)
	if err == nil || !strings.Contains(err.Error(), "run "+run.ID+" was already decided by tui (user test): old") || strings.HasSuffix(err.Error(), "conflict") {
		t.Fatalf("second decision: %v", err)
	}
	evs, err := st.EventList(ctx, store.EventListParams{RunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		found = found || (e.Kind == "version_decided" && strings.Contains(string(e.Data), "tui (user test)"))
	}
	if !found {
		t.Fatalf("no version_decided event by the tui")
	}
}
