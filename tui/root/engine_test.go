package root

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

const shipV1 = `
workflow "ship" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}
`

// blockedRuns stores ship 1.0.0, parks n runs of it on their signal, then
// stores 2.0.0 (the wait takes another signal: MAJOR) and rebinds them:
// they are blocked on a version decision.
func blockedRuns(t *testing.T, b *fixture.Bundle, n int) []store.Run {
	t.Helper()
	b.StoreHCL(t, shipV1)
	var runs []store.Run
	for range n {
		runs = append(runs, b.Drive(t, b.Start(t, "ship", nil).ID))
		b.Clock.Advance(time.Second)
	}
	b.StoreHCL(t, strings.NewReplacer("1.0.0", "2.0.0", `"go"`, `"start"`).Replace(shipV1))
	for i, r := range runs {
		r, err := b.Engine.Rebind(context.Background(), r.ID)
		if err != nil || r.Status != store.RunBlocked {
			t.Fatalf("rebind %s: %s, %v", r.ID, r.Status, err)
		}
		runs[i] = r
	}
	return runs
}

// TestDecideThroughEngine: d on a blocked run shows the engine's plan,
// and a confirmed choice is the engine's decision, recorded as made by the
// source's By. A choice made on a screen that someone else's decision
// overtook is refused with the engine's sentence naming that decision.
func TestDecideThroughEngine(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	runs := blockedRuns(t, b, 2)
	m := newRoot(t, feed.Local(b.Engine, "tui (user test)"), b)
	if r, _ := m.runs.Selected(); r.ID != runs[1].ID {
		t.Fatalf("selected %s, want the newest blocked run %s", r.ID, runs[1].ID)
	}
	m = press(t, m, "d")
	if v := boxed(m.View()); m.decide == nil || !strings.Contains(v, "Changes from 1.0.0 to 2.0.0") || !strings.Contains(v, `step "ask" wait parameters changed (signal)`) {
		t.Fatalf("d did not show the engine's plan:\n%s", m.View())
	}
	m = press(t, m, "o")
	if m.confirm == nil || !strings.Contains(boxed(m.View()), `Decide "old" for run `+runs[1].ID+"?") {
		t.Fatalf("o did not ask to confirm:\n%s", m.View())
	}
	m = press(t, m, "y")
	if v := boxed(m.View()); !strings.Contains(v, "Run "+runs[1].ID+": decided old.") {
		t.Fatalf("no report of the decision:\n%s", m.View())
	}
	if r, _ := b.Store.RunGet(ctx, runs[1].ID); r.Status != store.RunPending || r.Version != "1.0.0" {
		t.Fatalf("after old: %s on %s, want pending on 1.0.0", r.Status, r.Version)
	}
	evs, err := b.Store.EventList(ctx, store.EventListParams{RunID: runs[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	by := false
	for _, e := range evs {
		by = by || (e.Kind == "version_decided" && strings.Contains(string(e.Data), `"by":"tui (user test)"`))
	}
	if !by {
		t.Fatal("no version_decided event by tui (user test)")
	}

	// The other run: its screen is open when the CLI decides it.
	m = send(t, m, PollMsg{})
	m = press(t, m, "j")
	if r, _ := m.runs.Selected(); r.ID != runs[0].ID {
		t.Fatalf("selected %s, want the other blocked run %s", r.ID, runs[0].ID)
	}
	m = press(t, m, "d")
	if m.decide == nil {
		t.Fatalf("d did not open the decision screen:\n%s", m.View())
	}
	if _, err := b.Engine.Decide(ctx, interp.DecideParams{RunID: runs[0].ID, Choice: interp.ChoiceOld, By: "cli (user ann)", From: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	m = press(t, m, "n", "y")
	v := boxed(m.View())
	if !strings.Contains(v, "run "+runs[0].ID+" was already decided by cli (user ann): old; it is pending now") || strings.Contains(v, "conflict") {
		t.Fatalf("an overtaken decision is not refused with the engine's sentence:\n%s", m.View())
	}
	if r, _ := b.Store.RunGet(ctx, runs[0].ID); r.Status != store.RunPending || r.Version != "1.0.0" {
		t.Fatalf("the refused decision changed the run: %s on %s", r.Status, r.Version)
	}
}

const resilienceHCL = `
workflow "each" {
  version = "1.0.0"
  step "process" {
    foreach {
      items      = "['a', 'b']"
      on_failure = "dead_letter"
    }
    exec { command = ["sh", "-c", "test {{ item }} != b"] }
  }
}
workflow "guarded" {
  version = "1.0.0"
  breaker "api" {
    failures = 1
    cooldown = "30s"
  }
  step "call" {
    breaker = breaker.api
    exec { command = ["sh", "-c", "exit 1"] }
  }
}
`

// TestDeadLettersAndBreakersFromEngine: the dead-letter and breaker
// screens list what the engine lists, and a dead letter dropped there is
// dropped through the engine and leaves the list.
func TestDeadLettersAndBreakersFromEngine(t *testing.T) {
	ctx := context.Background()
	b := fixture.New(t)
	b.StoreHCL(t, resilienceHCL)
	each := b.Drive(t, b.Start(t, "each", nil).ID)
	if g := b.Drive(t, b.Start(t, "guarded", nil).ID); g.Status != store.RunFailed {
		t.Fatalf("setup: guarded is %s", g.Status)
	}
	m := newRoot(t, feed.Local(b.Engine, ""), b)

	m = press(t, m, "3")
	if v := boxed(m.View()); !strings.Contains(v, "api open 1 in 30s") {
		t.Fatalf("the breakers screen does not show api open until 30s from now:\n%s", m.View())
	}

	m = press(t, m, "2")
	v := boxed(m.View())
	if !strings.Contains(v, "Dead letters (1)") || !strings.Contains(v, "process [1] b") || !strings.Contains(v, each.ID[:12]) {
		t.Fatalf("the dead-letter screen does not list item 1 of process:\n%s", m.View())
	}
	// A retry that fails again says so in the engine's words, once, as
	// flowrun dlq retry does.
	m = press(t, m, "r")
	m = press(t, m, "y")
	if v := boxed(m.View()); !strings.Contains(v, "dead letter 1 (process[1]) failed again: command \"sh\" exited with status 1; the letter stays open") ||
		strings.Count(v, "dead letter 1") != 1 {
		t.Fatalf("the retry that failed again is not said as flowrun dlq retry says it:\n%s", m.View())
	}
	m = press(t, m, "x")
	if m.confirm == nil || !strings.Contains(boxed(m.View()), "Item 1 of step process of run "+each.ID+" is deleted for good.") {
		t.Fatalf("x did not ask to drop the dead letter:\n%s", m.View())
	}
	m = press(t, m, "y")
	open, err := b.Engine.DeadLetterList(ctx, false)
	if err != nil || len(open) != 0 {
		t.Fatalf("open dead letters after the drop: %+v, %v", open, err)
	}
	if v := boxed(m.View()); !strings.Contains(v, "dropped.") || !strings.Contains(v, "No dead letters.") {
		t.Fatalf("the screen does not show the drop:\n%s", m.View())
	}
}

// boxed is flat for a screen with a dialog: the dialog's borders go too.
func boxed(s string) string { return flat(strings.ReplaceAll(s, "│", " ")) }

// TestDecideHelpOffersOnlyWorkingChoices: when the newest version needs an
// input the run was not started with, neither new nor migrate can work;
// the decision screen says why, and its help bar offers only old (n and m
// do nothing there).
func TestDecideHelpOffersOnlyWorkingChoices(t *testing.T) {
	b := fixture.New(t)
	b.StoreHCL(t, shipV1)
	run := b.Drive(t, b.Start(t, "ship", nil).ID)
	b.StoreHCL(t, strings.NewReplacer("1.0.0", "2.0.0", `step "ask"`, `input "region" {
    type = string
  }
  step "ask"`).Replace(shipV1))
	if r, err := b.Engine.Rebind(context.Background(), run.ID); err != nil || r.Status != store.RunBlocked {
		t.Fatalf("rebind %s: %s, %v", run.ID, r.Status, err)
	}
	m := newRoot(t, feed.Local(b.Engine, "tui (user test)"), b)
	m = press(t, m, "d")
	if m.decide == nil || !strings.Contains(boxed(m.View()), "Neither new nor migrate can work") {
		t.Fatalf("d did not show why new and migrate cannot work:\n%s", m.View())
	}
	// 2.0.0 is MAJOR by its number; its changes need MAJOR too (an input
	// added without a default).
	if !strings.Contains(boxed(m.View()), "It is bound to 1.0.0; 2.0.0 is stored and differs in a MAJOR way.") {
		t.Fatalf("the screen does not say how 2.0.0 differs:\n%s", m.View())
	}
	lines := strings.Split(strings.TrimRight(m.View(), "\n"), "\n")
	help := lines[len(lines)-1]
	if !strings.Contains(help, "old") || strings.Contains(help, "new") || strings.Contains(help, "migrate") {
		t.Fatalf("help bar %q offers a choice that cannot work", help)
	}
	if m = press(t, m, "n"); m.confirm != nil {
		t.Fatalf("n asked to confirm a choice that cannot work:\n%s", m.View())
	}
}

// TestDecideSaysMajorByNumber: a new MAJOR whose changes need less (here
// a step added: MINOR) blocks the run by its number; the decision screen
// says so rather than "differs in a MINOR way".
func TestDecideSaysMajorByNumber(t *testing.T) {
	b := fixture.New(t)
	b.StoreHCL(t, shipV1)
	run := b.Drive(t, b.Start(t, "ship", nil).ID)
	b.StoreHCL(t, strings.NewReplacer("1.0.0", "2.0.0", `step "ask"`, `step "note" {
    set { text = "v2" }
  }
  step "ask"`).Replace(shipV1))
	if r, err := b.Engine.Rebind(context.Background(), run.ID); err != nil || r.Status != store.RunBlocked {
		t.Fatalf("rebind %s: %s, %v", run.ID, r.Status, err)
	}
	m := newRoot(t, feed.Local(b.Engine, "tui (user test)"), b)
	m = press(t, m, "d")
	if v := boxed(m.View()); m.decide == nil || !strings.Contains(v, "2.0.0 is a new MAJOR (its changes need only MINOR).") {
		t.Fatalf("the screen does not say 2.0.0 blocks by its number:\n%s", m.View())
	}
}
