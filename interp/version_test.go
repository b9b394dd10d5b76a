package interp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

func TestBind(t *testing.T) {
	cases := []struct {
		bound  string
		stored []string
		pin    string
		old    bool
		want   string // MoveTo/Newest/Block
	}{
		{"1.0.0", []string{"1.0.0"}, "", false, "//false"},
		{"1.0.0", []string{"1.0.0", "1.0.1"}, "", false, "1.0.1/1.0.1/false"},
		{"1.0.0", []string{"1.0.0", "1.0.1", "1.0.2"}, "", false, "1.0.2/1.0.2/false"},
		{"1.0.0", []string{"1.0.0", "1.1.0"}, "", false, "/1.1.0/false"},
		{"1.0.0", []string{"1.0.0", "1.0.1", "1.1.0"}, "", false, "1.0.1/1.1.0/false"},
		{"1.0.0", []string{"1.0.0", "1.0.1", "2.0.0"}, "", false, "/2.0.0/true"},
		{"1.0.0", []string{"1.0.0", "1.0.1", "2.0.0"}, "", true, "1.0.1/2.0.0/false"},
		{"1.0.0", []string{"1.0.0", "1.0.1", "2.0.0"}, "1", false, "1.0.1/1.0.1/false"},
		{"1.0.0", []string{"1.0.0", "1.0.1", "1.1.0", "2.0.0"}, "1", false, "1.0.1/1.1.0/false"},
		{"1.0.0", []string{"1.0.0", "1.0.1"}, "1.0.0", false, "//false"},
		{"1.2.0", []string{"1.2.0", "1.2.3", "1.3.0"}, "1.2", false, "1.2.3/1.2.3/false"},
	}
	for _, c := range cases {
		b, err := Bind(c.bound, c.stored, c.pin, c.old)
		if err != nil {
			t.Fatalf("Bind(%s, %v, %q): %v", c.bound, c.stored, c.pin, err)
		}
		if got := fmt.Sprintf("%s/%s/%v", b.MoveTo, b.Newest, b.Block); got != c.want {
			t.Errorf("Bind(%s, %v, %q, %v) = %s, want %s (%s)", c.bound, c.stored, c.pin, c.old, got, c.want, b)
		}
	}
	if _, err := Bind("1.0", nil, "", false); err == nil {
		t.Fatalf("Bind of a bad version: no error")
	}
}

// TestBindingWrite: what a binding writes is a pure function of the run,
// the binding (decided by Bind) and the version moved to (read before):
// a block releases the run blocked on "version" with event
// version_blocked; a move sets the version and graph hash with event
// version_moved; a run that finishes on its own MAJOR.MINOR or has nothing
// newer gets no write.
func TestBindingWrite(t *testing.T) {
	run := store.Run{ID: "r1", Workflow: "ship", Version: "1.0.0", GraphHash: "h100"}
	to := store.Version{Workflow: "ship", Version: "1.0.2", Hash: "h102"}
	for _, tc := range []struct {
		name   string
		b      Binding
		to     store.Version
		wrote  bool
		update string // Status/WaitReason/released/Version/GraphHash
		events string // kind: data
	}{
		{name: "block", b: Binding{Bound: "1.0.0", Newest: "2.0.0", Block: true}, wrote: true,
			update: "blocked/version/released//",
			events: `version_blocked: {"from":"1.0.0","message":"version 2.0.0 of \"ship\" is stored, a new MAJOR version; decide with: flowrun resume r1 --choose old|new|migrate","to":"2.0.0"}`},
		{name: "move to a newer PATCH", b: Binding{Bound: "1.0.0", MoveTo: "1.0.2", Newest: "1.0.2"}, to: to, wrote: true,
			update: "///1.0.2/h102",
			events: `version_moved: {"from":"1.0.0","from_hash":"h100","message":"moved from 1.0.0 to 1.0.2, a newer PATCH of the same MAJOR.MINOR","to":"1.0.2","to_hash":"h102"}`},
		{name: "move, then finish on it", b: Binding{Bound: "1.0.0", MoveTo: "1.0.2", Newest: "1.1.0"}, to: to, wrote: true,
			update: "///1.0.2/h102",
			events: `version_moved: {"from":"1.0.0","from_hash":"h100","message":"moved from 1.0.0 to 1.0.2, a newer PATCH of the same MAJOR.MINOR","to":"1.0.2","to_hash":"h102"}`},
		{name: "finish on its own MINOR", b: Binding{Bound: "1.0.0", Newest: "1.1.0"}, update: "////"},
		{name: "decided old", b: Binding{Bound: "1.0.0", Newest: "2.0.0", DecidedOld: true}, update: "////"},
		{name: "nothing newer", b: Binding{Bound: "1.0.0"}, update: "////"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &store.RunUpdate{}
			var evs []string
			wrote := bindingWrite(run, tc.b, tc.to, u, func(kind string, data any) { evs = append(evs, kind+": "+string(mustJSON(data))) })
			str := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			status := ""
			if u.Status != nil {
				status = string(*u.Status)
			}
			released := ""
			if u.Release {
				released = "released"
			}
			got := fmt.Sprintf("%s/%s/%s/%s/%s", status, str(u.WaitReason), released, str(u.Version), str(u.GraphHash))
			if wrote != tc.wrote || got != tc.update || strings.Join(evs, "\n") != tc.events {
				t.Fatalf("bindingWrite = %v, update %s, events %q; want %v, %s, %q", wrote, got, evs, tc.wrote, tc.update, tc.events)
			}
		})
	}
}

const waitV1 = `workflow "ship" {
  version = "1.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    depends_on = [step.ask]
    set { text = "v1 {{ steps.price.output.total }}" }
  }
}`

// waitV replaces the version and the label text of waitV1.
func waitV(version, label string) string {
	s := strings.Replace(waitV1, `"1.0.0"`, `"`+version+`"`, 1)
	return strings.Replace(s, `"v1 {{`, `"`+label+` {{`, 1)
}

func (b *bundle) parked() store.Run {
	b.t.Helper()
	b.compile(waitV1)
	started, _, err := b.e.StartRun(b.ctx, StartParams{Workflow: "ship", Inputs: map[string]any{"order": "A"}, New: true, WorkDir: "/srv/flows"})
	if err != nil {
		b.t.Fatalf("start run: %v", err)
	}
	run := b.drive(started.ID)
	wantStatus(b.t, run, store.RunWaiting)
	return run
}

func (b *bundle) signalAndDrive(id string) store.Run {
	b.t.Helper()
	if _, err := b.e.Signal(b.ctx, id, "go", nil); err != nil {
		b.t.Fatalf("signal: %v", err)
	}
	return b.drive(id)
}

func TestPatchMoves(t *testing.T) {
	b := setup(t)
	run := b.parked()
	b.compile(`workflow "ship" {
  version = "1.0.1"
  description = "patched"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    depends_on = [step.ask]
    set { text = "v1 {{ steps.price.output.total }}" }
  }
}`)
	run = b.signalAndDrive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	if run.Version != "1.0.1" {
		t.Fatalf("version = %s, want 1.0.1", run.Version)
	}
	if k := b.eventKinds(run.ID); !strings.Contains(k, "version_moved") {
		t.Fatalf("no version_moved event: %s", k)
	}
}

func TestMinorFinishesOnOwnGraph(t *testing.T) {
	b := setup(t)
	run := b.parked()
	b.compile(waitV("1.1.0", "v11"))
	run = b.signalAndDrive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	if run.Version != "1.0.0" || !strings.Contains(string(v.Steps["label"].Output), "v1 10") {
		t.Fatalf("version %s, label %s; want 1.0.0 and the v1 label", run.Version, v.Steps["label"].Output)
	}
}

func TestMajorBlocksAndDecisions(t *testing.T) {
	for _, choice := range []Choice{ChoiceOld, ChoiceNew, ChoiceMigrate} {
		t.Run(string(choice), func(t *testing.T) {
			b := setup(t)
			run := b.parked()
			b.compile(waitV("2.0.0", "v2"))
			// Rebind blocks the parked run at once, without a claim.
			run, err := b.e.Rebind(b.ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, run, store.RunBlocked)
			if run.WaitReason != "version" {
				t.Fatalf("wait reason %q", run.WaitReason)
			}
			// Nothing of a blocked run executes.
			if r := b.drive(run.ID); r.Status != store.RunBlocked {
				t.Fatalf("drive of a blocked run: %s", r.Status)
			}
			d, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: choice, By: "test"})
			if err != nil {
				t.Fatalf("decide: %v", err)
			}
			// ask is waiting, not settled: only price is kept; label changed
			// but had not run, so it is in neither list.
			if choice == ChoiceMigrate && (strings.Join(d.Plan.Keep, ",") != "price" || len(d.Plan.Rerun) != 0) {
				t.Fatalf("keep %v rerun %v", d.Plan.Keep, d.Plan.Rerun)
			}
			final := b.signalAndDrive(d.Run.ID)
			wantStatus(t, final, store.RunCompleted)
			label := string(b.show(final.ID).Steps["label"].Output)
			switch choice {
			case ChoiceOld:
				if final.Version != "1.0.0" || !strings.Contains(label, "v1 10") {
					t.Fatalf("old: version %s label %s", final.Version, label)
				}
				// Decided old: not blocked again by the same MAJOR.
				if b, err := b.e.binding(b.ctx, final, ""); err != nil || b.Block {
					t.Fatalf("decided-old run would block again: %v %v", b, err)
				}
			case ChoiceNew, ChoiceMigrate:
				if final.Version != "2.0.0" || !strings.Contains(label, "v2 10") {
					t.Fatalf("%s: version %s label %s", choice, final.Version, label)
				}
			}
			if choice == ChoiceNew {
				old, _ := b.st.RunGet(b.ctx, run.ID)
				wantStatus(t, old, store.RunCanceled)
				if !strings.Contains(string(old.Error), d.Run.ID) {
					t.Fatalf("canceled error does not name the new run: %s", old.Error)
				}
				// The replacement runs where the old run's workflow file was.
				if final.WorkDir != "/srv/flows" {
					t.Fatalf("new run's work dir %q, want the old run's /srv/flows", final.WorkDir)
				}
			}
			if k := b.eventKinds(run.ID); !strings.Contains(k, "version_blocked") || !strings.Contains(k, "version_decided") {
				t.Fatalf("events: %s", k)
			}
			// A second decision is refused: the run is no longer blocked.
			if _, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceOld}); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("second decision: %v", err)
			}
		})
	}
}

func TestMigrateRerunsChangedUpstream(t *testing.T) {
	b := setup(t)
	run := b.parked()
	// price changes (MINOR in itself); removing the edge ask→label is MAJOR.
	b.compile(`workflow "ship" {
  version = "2.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 20 }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    set { text = "v2 {{ steps.price.output.total }}" }
  }
}`)
	if _, err := b.e.Rebind(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	d, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceMigrate, By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Plan.Keep) != 0 || strings.Join(d.Plan.Rerun, ",") != "price" {
		t.Fatalf("keep %v rerun %v", d.Plan.Keep, d.Plan.Rerun)
	}
	final := b.signalAndDrive(run.ID)
	wantStatus(t, final, store.RunCompleted)
	v := b.show(final.ID)
	if !strings.Contains(string(v.Steps["price"].Output), "20") || !strings.Contains(string(v.Steps["label"].Output), "v2 20") {
		t.Fatalf("price %s label %s", v.Steps["price"].Output, v.Steps["label"].Output)
	}
}

// TestMigrateDroppedStepsLeaveTheCounts: a run migrated to a version
// without a step it had completed keeps that step's row (its history),
// but the run listings count the steps of the version it is bound to
// now: done never exceeds total.
func TestMigrateDroppedStepsLeaveTheCounts(t *testing.T) {
	b := setup(t)
	run := b.parked()
	b.compile(`workflow "ship" {
  version = "2.0.0"
  input "order" { type = string }
  key = "input.order"
  step "ask" {
    wait { signal = "go" }
  }
}`)
	if _, err := b.e.Rebind(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceMigrate, By: "test"}); err != nil {
		t.Fatal(err)
	}
	counts := func() (int, int) {
		t.Helper()
		rs, err := b.st.RunList(b.ctx, store.RunListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.ID == run.ID {
				return r.StepsDone, r.StepsTotal
			}
		}
		t.Fatalf("run %s not listed", run.ID)
		return 0, 0
	}
	if done, total := counts(); done != 0 || total != 1 {
		t.Fatalf("migrated run listed %d/%d, want 0/1", done, total)
	}
	final := b.signalAndDrive(run.ID)
	wantStatus(t, final, store.RunCompleted)
	if done, total := counts(); done != 1 || total != 1 {
		t.Fatalf("completed run listed %d/%d, want 1/1", done, total)
	}
	steps, err := b.st.StepList(b.ctx, final.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(steps, func(s store.Step) bool { return s.Key == "price" && s.Status == store.StepCompleted }) {
		t.Fatalf("the dropped step's row (its history) is gone: %+v", steps)
	}
}

func TestMigrateRefusedWhenInputsDoNotFit(t *testing.T) {
	b := setup(t)
	run := b.parked()
	b.compile(strings.Replace(waitV("2.0.0", "v2"), `key = "input.order"`, `key = "input.order"
  input "region" { type = string }`, 1))
	if _, err := b.e.Rebind(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Choice{ChoiceMigrate, ChoiceNew} {
		_, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: c})
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), `"region"`) {
			t.Fatalf("%s: %v", c, err)
		}
	}
	r, _ := b.st.RunGet(b.ctx, run.ID)
	wantStatus(t, r, store.RunBlocked)
}

func TestCompletedRunAndNewMinor(t *testing.T) {
	b := setup(t)
	b.compile(`workflow "w" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
}`)
	r1, created, err := b.e.StartRun(b.ctx, StartParams{Workflow: "w"})
	if err != nil || !created {
		t.Fatal(err)
	}
	b.drive(r1.ID)
	b.compile(`workflow "w" {
  version = "1.0.1"
  description = "patch"
  step "a" {
    set { x = 1 }
  }
}`)
	if r, created, _ := b.e.StartRun(b.ctx, StartParams{Workflow: "w"}); created || r.ID != r1.ID {
		t.Fatalf("a PATCH started a new run")
	}
	b.compile(`workflow "w" {
  version = "1.1.0"
  step "a" {
    set { x = 2 }
  }
}`)
	if _, created, _ := b.e.StartRun(b.ctx, StartParams{Workflow: "w"}); !created {
		t.Fatalf("a new MINOR did not start a new run")
	}
}

// A child pinned "1" binds to the newest 1.x when it starts (recorded in
// child_started), moves within 1.x PATCH releases and is never blocked by
// 2.0.0; a worker's claim (not Rebind) does the moving.
func TestChildPinNeverBlocks(t *testing.T) {
	b := setup(t)
	child := func(v, text string) string {
		return `workflow "kid" {
  version = "` + v + `"
  step "ask" {
    wait { signal = "go" }
  }
  step "say" {
    depends_on = [step.ask]
    set { text = "` + text + `" }
  }
}`
	}
	b.compile(child("1.0.0", "k100"))
	b.compile(child("1.1.0", "k110"))
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
	if err != nil || len(kids) != 1 || kids[0].Version != "1.1.0" {
		t.Fatalf("child: %v %+v", err, kids)
	}
	if k := b.eventKinds(run.ID); !strings.Contains(k, "child_started:call") {
		t.Fatalf("events: %s", k)
	}
	b.compile(child("1.1.1", "k111"))
	b.compile(strings.Replace(child("2.0.0", "k2"), `"go"`, `"start"`, 1))
	if _, err := b.e.Signal(b.ctx, kids[0].ID, "go", nil); err != nil {
		t.Fatal(err)
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	kid, _ := b.st.RunGet(b.ctx, kids[0].ID)
	wantStatus(t, kid, store.RunCompleted)
	if kid.Version != "1.1.1" || !strings.Contains(string(b.show(kid.ID).Steps["say"].Output), "k111") {
		t.Fatalf("child finished on %s", kid.Version)
	}
}

// A run parked on a timer is blocked by the claim itself when its timer is
// due and a new MAJOR is stored: nothing of it executes.
func TestClaimBlocks(t *testing.T) {
	b := setup(t)
	src := `workflow "nap" {
  version = "1.0.0"
  step "zz" {
    sleep { duration = "1m" }
  }
  step "after" {
    depends_on = [step.zz]
    set { ok = true }
  }
}`
	b.compile(src)
	run := b.drive(b.start("nap", nil).ID)
	wantStatus(t, run, store.RunWaiting)
	b.compile(strings.Replace(strings.Replace(src, "1.0.0", "2.0.0", 1), "depends_on = [step.zz]\n", "", 1))
	b.clk.Advance(2 * 60e9)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunBlocked)
	v := b.show(run.ID)
	if v.Steps["after"].Status != store.StepPending || v.Steps["zz"].Status != store.StepWaiting {
		t.Fatalf("steps ran while blocked: zz %s after %s", v.Steps["zz"].Status, v.Steps["after"].Status)
	}
	if k := b.eventKinds(run.ID); !strings.HasSuffix(k, "version_blocked") {
		t.Fatalf("events: %s", k)
	}
}

// blockedBundle is a bundle whose run of ship 1.0.0 is blocked by 2.0.0.
func blockedBundle(t *testing.T) (*bundle, store.Run) {
	t.Helper()
	b := setup(t)
	run := b.parked()
	b.compile(waitV("2.0.0", "v2"))
	run, err := b.e.Rebind(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, run, store.RunBlocked)
	return b, run
}

// otherProcess is a second engine on the same database file, through its
// own store (its own connections), as a second flowrun or flowtui process
// has. wrap, when set, wraps its store.
func (b *bundle) otherProcess(wrap func(store.Store) store.Store) *Engine {
	b.t.Helper()
	st, err := sqlite.Open(b.ctx, b.st.Path(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.t.Fatalf("open the store again: %v", err)
	}
	b.t.Cleanup(func() { st.Close() })
	var s store.Store = st
	if wrap != nil {
		s = wrap(st)
	}
	return New(s, Options{Clock: b.clk, Owner: store.Owner{Host: "otherhost", PID: 2, Worker: "t"},
		Getenv: func(string) string { return "" }, Rand: rand.New(rand.NewPCG(3, 4)), ParkWait: -1})
}

// liveRuns lists the runs of ship that are not finished.
func (b *bundle) liveRuns() []string {
	b.t.Helper()
	rs, err := b.st.RunList(b.ctx, store.RunListParams{Workflow: "ship"})
	if err != nil {
		b.t.Fatal(err)
	}
	var live []string
	for _, r := range rs {
		if !r.Status.Terminal() {
			live = append(live, r.ID)
		}
	}
	return live
}

// commitHook is a store whose first TransitionCommit passes its batch
// through before (a later one goes straight to the store), and which fails
// the test if a run is inserted outside a transition.
type commitHook struct {
	store.Store
	t      *testing.T
	before func(ts []store.Transition) []store.Transition
}

func (h *commitHook) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	if h.before != nil {
		f := h.before
		h.before = nil
		ts = f(ts)
	}
	return h.Store.TransitionCommit(ctx, ts)
}

func (h *commitHook) RunInsert(ctx context.Context, p store.RunInsertParams) (store.Run, error) {
	h.t.Errorf("run %s inserted in a write of its own, outside the decision's transaction", p.ID)
	return h.Store.RunInsert(ctx, p)
}

// TestConcurrentDecisionsOneWins has two processes decide the same blocked
// run at the same moment, for each pair of choices: exactly one decision is
// written, the other gets a DecidedError naming the winner and its choice,
// and a "new" leaves exactly one live run.
func TestConcurrentDecisionsOneWins(t *testing.T) {
	pairs := [][2]Choice{{ChoiceOld, ChoiceMigrate}, {ChoiceNew, ChoiceNew}, {ChoiceNew, ChoiceOld}, {ChoiceMigrate, ChoiceNew}}
	for _, pair := range pairs {
		t.Run(string(pair[0])+"-"+string(pair[1]), func(t *testing.T) {
			b, run := blockedBundle(t)
			engines := []*Engine{b.e, b.otherProcess(nil)}
			by := []string{"cli (user ann)", "tui (user bob)"}
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 2)
			decs := make([]Decision, 2)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					decs[i], errs[i] = engines[i].Decide(b.ctx, DecideParams{RunID: run.ID, Choice: pair[i], By: by[i], From: "1.0.0"})
				}()
			}
			close(start)
			wg.Wait()
			win := -1
			for i, err := range errs {
				if err == nil {
					if win >= 0 {
						t.Fatalf("both decisions were written: %s and %s", pair[0], pair[1])
					}
					win = i
				}
			}
			if win < 0 {
				t.Fatalf("no decision was written: %v; %v", errs[0], errs[1])
			}
			lose := 1 - win
			var de *DecidedError
			if !errors.As(errs[lose], &de) || !errors.Is(errs[lose], store.ErrConflict) {
				t.Fatalf("losing decision: %v, want a DecidedError", errs[lose])
			}
			if de.By != by[win] || de.Choice != pair[win] {
				t.Fatalf("loser told decided by %q: %s, want %q: %s", de.By, de.Choice, by[win], pair[win])
			}
			want := fmt.Sprintf("run %s was already decided by %s: %s", run.ID, by[win], pair[win])
			if !strings.HasPrefix(errs[lose].Error(), want) {
				t.Fatalf("loser's message %q, want it to start %q", errs[lose], want)
			}
			if n := strings.Count(b.eventKinds(run.ID), "version_decided"); n != 1 {
				t.Fatalf("%d version_decided events, want 1", n)
			}
			if live := b.liveRuns(); len(live) != 1 || live[0] != decs[win].Run.ID {
				t.Fatalf("live runs %v, want only %s", live, decs[win].Run.ID)
			}
		})
	}
}

// TestDecisionLosesInsideItsCommit makes the race deterministic: the other
// process has read the run blocked and passed every check, and the first
// one decides just before its commit. The compare-and-set in the commit
// refuses the late decision, which writes nothing.
func TestDecisionLosesInsideItsCommit(t *testing.T) {
	b, run := blockedBundle(t)
	var first Decision
	late := b.otherProcess(func(s store.Store) store.Store {
		return &commitHook{Store: s, t: t, before: func(ts []store.Transition) []store.Transition {
			var err error
			if first, err = b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceNew, By: "apply prompt (user ann)"}); err != nil {
				t.Fatalf("first decision: %v", err)
			}
			return ts
		}}
	})
	_, err := late.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceMigrate, By: "tui (user bob)"})
	var de *DecidedError
	if !errors.As(err, &de) || de.Choice != ChoiceNew || de.NewRunID != first.Run.ID || de.By != "apply prompt (user ann)" {
		t.Fatalf("late decision: %v (%+v)", err, de)
	}
	if live := b.liveRuns(); len(live) != 1 || live[0] != first.Run.ID {
		t.Fatalf("live runs %v, want only the replacement %s", live, first.Run.ID)
	}
	if got, _ := b.st.RunGet(b.ctx, run.ID); got.Version != "1.0.0" || got.Status != store.RunCanceled {
		t.Fatalf("the late migrate was written: %s %s", got.Status, got.Version)
	}
}

// TestDecisionFromAStaleLook refuses a decision made from a screen that
// showed the run on a version it has since left: migrated to 2.0.0 and
// blocked again by 3.0.0, the run is blocked, but not on what was shown.
func TestDecisionFromAStaleLook(t *testing.T) {
	b, run := blockedBundle(t)
	if _, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceMigrate, By: "cli (user ann)"}); err != nil {
		t.Fatal(err)
	}
	b.compile(waitV("3.0.0", "v3"))
	run, err := b.e.Rebind(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, run, store.RunBlocked)
	_, err = b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceOld, By: "tui (user bob)", From: "1.0.0"})
	var de *DecidedError
	if !errors.As(err, &de) || de.Choice != ChoiceMigrate || de.By != "cli (user ann)" {
		t.Fatalf("decision from a stale look: %v", err)
	}
	if got, _ := b.st.RunGet(b.ctx, run.ID); got.Status != store.RunBlocked || got.Version != "2.0.0" {
		t.Fatalf("run after a refused decision: %s %s", got.Status, got.Version)
	}
	// The decision for what the run is blocked on now goes through.
	if _, err := b.e.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceOld, By: "tui (user bob)", From: "2.0.0"}); err != nil {
		t.Fatalf("decision on the current look: %v", err)
	}
}

// TestDecideNewIsOneTransaction is the crash-safety argument for "new":
// the replacement run is created in the same transaction that cancels the
// old run and records the decision (never by a RunInsert of its own), so a
// failure injected inside that transaction, after the replacement's insert,
// leaves the database as it was: the old run blocked, no replacement, no
// decision. A crash of the process at any point is the same case, since the
// transaction never commits. Without the failure the same decision applies
// whole.
func TestDecideNewIsOneTransaction(t *testing.T) {
	b, run := blockedBundle(t)
	eng := b.otherProcess(func(s store.Store) store.Store {
		return &commitHook{Store: s, t: t, before: func(ts []store.Transition) []store.Transition {
			if len(ts) != 1 || len(ts[0].Runs) != 1 {
				t.Fatalf("the decision's commit holds %d transitions, the first creating %d runs; want 1 creating the replacement", len(ts), len(ts[0].Runs))
			}
			// A part after the replacement's insert fails: a signal that is
			// not the run's.
			ts[0].ConsumeSignals = append(ts[0].ConsumeSignals, store.SignalConsume{SignalID: 1 << 40, StepKey: "ask"})
			return ts
		}}
	})
	before, err := b.st.RunGet(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	evs := b.eventKinds(run.ID)
	if _, err := eng.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceNew, By: "cli"}); err == nil {
		t.Fatalf("decision with a failure injected: no error")
	}
	after, err := b.st.RunGet(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != store.RunBlocked || !after.UpdatedAt.Equal(before.UpdatedAt) || len(after.Error) != 0 {
		t.Fatalf("old run after the failed decision: %s, updated %v (was %v), error %s", after.Status, after.UpdatedAt, before.UpdatedAt, after.Error)
	}
	if got := b.eventKinds(run.ID); got != evs {
		t.Fatalf("events after the failed decision: %s, want %s", got, evs)
	}
	if live := b.liveRuns(); len(live) != 1 || live[0] != run.ID {
		t.Fatalf("live runs %v, want only the blocked %s", live, run.ID)
	}
	if rs, _ := b.st.RunList(b.ctx, store.RunListParams{Workflow: "ship"}); len(rs) != 1 {
		t.Fatalf("%d runs of ship after the failed decision, want 1", len(rs))
	}

	d, err := eng.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceNew, By: "cli"})
	if err != nil {
		t.Fatalf("decision: %v", err)
	}
	if live := b.liveRuns(); len(live) != 1 || live[0] != d.Run.ID {
		t.Fatalf("live runs %v, want only the replacement %s", live, d.Run.ID)
	}
	if k := b.eventKinds(d.Run.ID); !strings.Contains(k, "run_created") || !strings.Contains(k, "version_decided") {
		t.Fatalf("replacement's events: %s", k)
	}
}

// TestDecideNewCancelsChildrenInItsCommit: the child runs of a run decided
// "new" are canceled in the decision's own transaction, so a failure inside
// it leaves them waiting with their blocked parent, and the decision, once
// it applies, leaves no live run of the old tree behind.
func TestDecideNewCancelsChildrenInItsCommit(t *testing.T) {
	b := setup(t)
	b.compile(`workflow "kid" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "go" }
  }
}`)
	parent := `workflow "parent" {
  version = "1.0.0"
  step "call" {
    workflow {
      name    = "kid"
      version = "1"
    }
  }
}`
	b.compile(parent)
	run := b.drive(b.start("parent", nil).ID)
	wantStatus(t, run, store.RunWaiting)
	kids, err := b.st.RunChildren(b.ctx, run.ID)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children: %v %+v", err, kids)
	}
	kid := kids[0]
	wantStatus(t, kid, store.RunWaiting)
	b.compile(strings.Replace(strings.Replace(parent, `"1.0.0"`, `"2.0.0"`, 1), `step "call"`, `step "call2"`, 1))
	if run, err = b.e.Rebind(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, run, store.RunBlocked)

	// The hook fires on the first commit only: the decision's.
	eng := b.otherProcess(func(s store.Store) store.Store {
		return &commitHook{Store: s, t: t, before: func(ts []store.Transition) []store.Transition {
			if len(ts) != 1 || strings.Join(ts[0].CancelTrees, ",") != kid.ID {
				t.Fatalf("the decision's commit cancels %v, want the child %s", ts[0].CancelTrees, kid.ID)
			}
			ts[0].ConsumeSignals = append(ts[0].ConsumeSignals, store.SignalConsume{SignalID: 1 << 40, StepKey: "call"})
			return ts
		}}
	})
	if _, err := eng.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceNew, By: "cli"}); err == nil {
		t.Fatalf("decision with a failure injected: no error")
	}
	if got, _ := b.st.RunGet(b.ctx, kid.ID); got.Status != store.RunWaiting || got.CancelRequested {
		t.Fatalf("child after the failed decision: %s (cancel requested %v)", got.Status, got.CancelRequested)
	}
	if got, _ := b.st.RunGet(b.ctx, run.ID); got.Status != store.RunBlocked {
		t.Fatalf("parent after the failed decision: %s", got.Status)
	}
	d, err := eng.Decide(b.ctx, DecideParams{RunID: run.ID, Choice: ChoiceNew, By: "cli"})
	if err != nil {
		t.Fatalf("decision: %v", err)
	}
	if got, _ := b.st.RunGet(b.ctx, kid.ID); got.Status != store.RunCanceled {
		t.Fatalf("child after the decision: %s", got.Status)
	}
	rs, err := b.st.RunList(b.ctx, store.RunListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !r.Status.Terminal() && r.ID != d.Run.ID {
			t.Fatalf("run %s of %s is live besides the replacement %s", r.ID, r.Workflow, d.Run.ID)
		}
	}
}
