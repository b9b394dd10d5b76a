package interp

import (
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestOfferDecision: a decision is offered on a blocked run and on a
// parked run bound to an older MAJOR (without blocking it: the offer
// writes nothing), and refused with the reason on a run decided old, a
// finished run, a run with no newer MAJOR and a child kept to its pin.
func TestOfferDecision(t *testing.T) {
	b := setup(t)
	run := b.parked()
	offer := func(r store.Run) DecisionOffer {
		t.Helper()
		o, err := b.e.OfferDecision(b.ctx, r)
		if err != nil {
			t.Fatalf("OfferDecision: %v", err)
		}
		return o
	}
	if o := offer(run); o.Offer || !strings.Contains(o.Reason, `no newer MAJOR version of "ship" than 1.0.0`) {
		t.Fatalf("no newer version: %+v", o)
	}
	b.compile(waitV("1.1.0", "v11"))
	if o := offer(run); o.Offer || o.Newest != "1.1.0" {
		t.Fatalf("newer MINOR only: %+v", o)
	}
	b.compile(waitV("2.0.0", "v2"))
	if o := offer(run); !o.Offer || o.Blocked || o.Newest != "2.0.0" {
		t.Fatalf("parked run under a newer MAJOR: %+v", o)
	}
	if r, _ := b.st.RunGet(b.ctx, run.ID); r.Status != store.RunWaiting {
		t.Fatalf("the offer wrote: the run is %s", r.Status)
	}
	blocked, err := b.e.Rebind(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o := offer(blocked); !o.Offer || !o.Blocked || o.Newest != "2.0.0" {
		t.Fatalf("blocked run: %+v", o)
	}
	d, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceOld, By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if o := offer(d.Run); o.Offer || !strings.Contains(o.Reason, "was decided old") {
		t.Fatalf("decided old: %+v", o)
	}
	b.compile(waitV("3.0.0", "v3"))
	if o := offer(d.Run); o.Offer || !strings.Contains(o.Reason, "was decided old") {
		t.Fatalf("decided old, a later MAJOR: %+v", o)
	}
	done := b.signalAndDrive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	if o := offer(done); o.Offer || !strings.Contains(o.Reason, "is completed") {
		t.Fatalf("completed run: %+v", o)
	}
}

// TestOfferDecisionChildPin: a child pinned to MAJOR 1 is offered no
// decision when 2.0.0 of its workflow is stored; its parent is named.
func TestOfferDecisionChildPin(t *testing.T) {
	b := setup(t)
	kid := func(v string) string {
		return `workflow "kid" {
  version = "` + v + `"
  step "ask" {
    wait { signal = "go" }
  }
}`
	}
	b.compile(kid("1.0.0"))
	b.compile(`workflow "parent" {
  version = "1.0.0"
  step "call" {
    workflow {
      name    = "kid"
      version = "1"
    }
  }
}`)
	run := b.drive(b.start("parent", nil).ID)
	wantStatus(t, run, store.RunWaiting)
	kids, err := b.st.RunChildren(b.ctx, run.ID)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children: %v %+v", err, kids)
	}
	b.compile(kid("2.0.0"))
	child, _ := b.st.RunGet(b.ctx, kids[0].ID)
	o, err := b.e.OfferDecision(b.ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	if o.Offer || !strings.Contains(o.Reason, "version pin") {
		t.Fatalf("pinned child: %+v", o)
	}
}
