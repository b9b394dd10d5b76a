package interp

import (
	"errors"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// TestReplaceDevVersion: another graph of the newest development version
// (MAJOR 0) replaces it in place as its next revision (spec/versioning.md
// §8); the run that completed on revision 1 keeps its graph, and is not
// reported for an apply of revision 2 (a new revision counts as a new
// release for language §2's key rule), while a run on revision 2 is.
func TestReplaceDevVersion(t *testing.T) {
	b := setup(t)
	b.compile(versionSrc("0.1.0", "a"))
	first := b.drive(b.startKey("v", nil).ID)
	if first.Status != store.RunCompleted {
		t.Fatalf("first run: %s", first.Status)
	}

	g := compileOne(t, versionSrc("0.1.0", "b"))
	c, err := b.e.CheckVersion(b.ctx, CheckVersionParams{Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	if c.Refused != nil || !c.Replace || c.Revision != 2 || c.Against.Revision != 1 || len(c.Changes) == 0 {
		t.Fatalf("check of another graph of 0.1.0: replace %v revision %d against revision %d, %d changes, refused %v; want a replacement as revision 2",
			c.Replace, c.Revision, c.Against.Revision, len(c.Changes), c.Refused)
	}
	v, err := b.e.StoreGraph(b.ctx, g)
	if err != nil {
		t.Fatalf("storing revision 2: %v", err)
	}
	if v.Revision != 2 {
		t.Fatalf("stored revision %d, want 2", v.Revision)
	}

	// The first run still has the graph it ran, revision 1.
	old, err := b.st.VersionGetByHash(b.ctx, "v", first.GraphHash)
	if err != nil || old.Revision != 1 || old.Version != "0.1.0" {
		t.Fatalf("the first run's graph: %s revision %d, %v; want 0.1.0 revision 1", old.Version, old.Revision, err)
	}
	rg, err := b.e.RunGraph(b.ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := graph.Hash(rg); err != nil || h != first.GraphHash || h == v.Hash {
		t.Errorf("the first run's graph hashes to %.12s (%v), want revision 1's %.12s", h, err, first.GraphHash)
	}

	// Key rule: the run completed on revision 1 does not stand for revision 2.
	b.clk.Advance(time.Second) // the newest run with the key is the newest by time
	second := b.startKey("v", nil)
	if second.ID == first.ID {
		t.Fatalf("the apply of revision 2 reported the run completed on revision 1")
	}
	if second.GraphHash != v.Hash {
		t.Fatalf("the new run is bound to %.12s, want revision 2's %.12s", second.GraphHash, v.Hash)
	}
	// An unfinished run bound to the version refuses a replacement.
	c, err = b.e.CheckVersion(b.ctx, CheckVersionParams{Graph: compileOne(t, versionSrc("0.1.0", "c"))})
	if err != nil {
		t.Fatal(err)
	}
	var inUse *store.VersionInUseError
	if !errors.As(c.Refused, &inUse) || inUse.Run != second.ID || c.Replace {
		t.Fatalf("check while run %s is pending: replace %v, refused %v; want a *store.VersionInUseError naming it", second.ID, c.Replace, c.Refused)
	}
	if _, err := b.e.StoreGraph(b.ctx, compileOne(t, versionSrc("0.1.0", "c"))); !errors.Is(err, store.ErrVersionInUse) {
		t.Fatalf("storing while a run is bound: %v, want ErrVersionInUse", err)
	}
	if done := b.drive(second.ID); done.Status != store.RunCompleted {
		t.Fatalf("second run: %s", done.Status)
	}
	// A run completed on the current revision stands for the apply.
	if again := b.startKey("v", nil); again.ID != second.ID {
		t.Fatalf("the apply of the same revision started %s, want the completed run %s reported", again.ID, second.ID)
	}
}

// TestReplaceDevVersionLimits: only the newest development version is
// replaced, a replacement must be a valid bump from the version below it,
// and a released version (MAJOR 1 and up) is never replaced.
func TestReplaceDevVersionLimits(t *testing.T) {
	b := setup(t)
	b.compile(versionSrc("0.1.0", "a"))
	b.compile(versionSrc("0.2.0", "b"))
	check := func(src string) VersionCheck {
		t.Helper()
		c, err := b.e.CheckVersion(b.ctx, CheckVersionParams{Graph: compileOne(t, src)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	reason := func(c VersionCheck) graph.BumpReason {
		t.Helper()
		var be *graph.BumpError
		if !errors.As(c.Refused, &be) || c.Replace {
			t.Fatalf("refused %v (replace %v), want a *graph.BumpError", c.Refused, c.Replace)
		}
		return be.Reason
	}
	if r := reason(check(versionSrc("0.1.0", "changed"))); r != graph.BumpSameVersion {
		t.Errorf("replacing 0.1.0 below 0.2.0: %v, want BumpSameVersion", r)
	}
	// 0.2.0 without step "a" (a removed step needs MAJOR from 0.1.0).
	c := check(`
workflow "v" {
  version = "0.2.0"
  step "other" {
    set { x = "b" }
  }
}`)
	if r := reason(c); r != graph.BumpTooSmall || c.Below.Version != "0.1.0" {
		t.Errorf("replacing 0.2.0 with a MAJOR change from 0.1.0: %v below %q, want BumpTooSmall below 0.1.0", r, c.Below.Version)
	}
	if c := check(versionSrc("0.2.0", "c")); !c.Replace || c.Refused != nil || c.Below.Version != "0.1.0" {
		t.Errorf("replacing 0.2.0 with a MINOR change from 0.1.0: replace %v refused %v", c.Replace, c.Refused)
	}

	b.compile(versionSrc("1.0.0", "a"))
	if r := reason(check(versionSrc("1.0.0", "changed"))); r != graph.BumpSameVersion {
		t.Errorf("another graph of 1.0.0: %v, want BumpSameVersion", r)
	}
	if _, err := b.e.StoreGraph(b.ctx, compileOne(t, versionSrc("1.0.0", "changed"))); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("storing another graph of 1.0.0: %v, want ErrVersionConflict", err)
	}
}
