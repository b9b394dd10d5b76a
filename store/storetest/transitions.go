package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testTransitions(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "stale lease is fenced off and writes nothing", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		f.insert(store.RunInsertParams{ID: "other", Now: at(0)})
		old := f.claimOne("w1", "r", at(0))
		g, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Name: "go", Now: at(time.Second)})
		noErr(t, "SignalSend", err)
		// w1's lease expires; w2 takes the run over.
		cur := f.claimOne("w2", "r", at(2*time.Minute))
		before := f.get("r")
		evsBefore := len(f.events("r"))
		done := store.RunCompleted
		res := f.commit(store.Transition{RunID: "r", Lease: old.Lease, Now: at(3 * time.Minute),
			Run:            &store.RunUpdate{Status: &done, Outputs: []byte(`{"x":1}`), Release: true},
			Steps:          []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepCompleted}},
			Attempts:       []store.AttemptWrite{{StepKey: "s", Attempt: 1, Status: store.AttemptCompleted}},
			Events:         []store.EventWrite{{Kind: "step_completed", StepKey: "s"}},
			Children:       []store.RunInsertParams{{ID: "child", Workflow: "wf", Version: "1.0.0", GraphHash: "h"}},
			ConsumeSignals: []store.SignalConsume{{SignalID: g.ID, StepKey: "s"}},
			Wake:           []string{"other"},
		})
		isErr(t, "stale transition", res.Err, store.ErrLeaseLost)
		eq(t, "event ids of a fenced transition", len(res.EventIDs), 0)
		after := f.get("r")
		eq(t, "run unchanged", after, before)
		eq(t, "lease", after.Lease, cur.Lease)
		eq(t, "steps", len(f.steps("r")), 0)
		eq(t, "attempts", len(f.attempts("r", "")), 0)
		eq(t, "events", len(f.events("r")), evsBefore)
		_, err = f.s.RunGet(f.ctx, "child")
		isErr(t, "child of a fenced transition", err, store.ErrNotFound)
		pending, err := f.s.SignalList(f.ctx, "r", true)
		noErr(t, "SignalList", err)
		eq(t, "signal still pending", len(pending), 1)
		timeEq(t, "other not woken", f.get("other").UpdatedAt, at(0))

		// The current holder's transition applies.
		res = f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(3 * time.Minute),
			Run: &store.RunUpdate{Status: &done, Release: true}})
		noErr(t, "current transition", res.Err)
		eq(t, "status", f.get("r").Status, store.RunCompleted)
	})

	parallel(t, "a transition that updates nothing of the run but its attempt count is fenced too", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		old := f.claimOne("w1", "r", at(0))
		cur := f.claimOne("w2", "r", at(2*time.Minute)) // w1's lease expired
		used := 3
		for _, u := range []*store.RunUpdate{nil, {AttemptsUsed: &used}} {
			res := f.commit(store.Transition{RunID: "r", Lease: old.Lease, Now: at(3 * time.Minute), Run: u,
				Steps: []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepRunning}}})
			isErr(t, "stale transition", res.Err, store.ErrLeaseLost)
		}
		eq(t, "steps", len(f.steps("r")), 0)
		before := f.get("r")
		res := f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(4 * time.Minute), Run: &store.RunUpdate{AttemptsUsed: &used},
			Steps: []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepRunning}}})
		noErr(t, "current transition", res.Err)
		after := f.get("r")
		eq(t, "attempts used", after.AttemptsUsed, 3)
		eq(t, "status", after.Status, before.Status)
		eq(t, "lease", after.Lease, before.Lease)
		timeEq(t, "available at", after.AvailableAt, before.AvailableAt)
		timeEq(t, "updated at", after.UpdatedAt, at(4*time.Minute))
		eq(t, "steps", len(f.steps("r")), 1)
	})

	parallel(t, "an attempt left running by a dead owner is closed interrupted and given back in one transition", newStore, func(t *testing.T, f *fixture) {
		// What the engine writes when it reclaims a run whose worker died
		// during an attempt (semantics.md §12): the attempt row goes from
		// running to interrupted, the step back to pending with its state,
		// and the run's attempts used down by one, all in one commit.
		f.insert(store.RunInsertParams{ID: "r"})
		old := f.claimOne("w1", "r", at(0))
		res := f.commit(store.Transition{RunID: "r", Lease: old.Lease, Now: at(time.Second), Run: &store.RunUpdate{AttemptsUsed: ptr(1)},
			Steps:    []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepRunning, Attempts: 1, StartedAt: at(time.Second)}},
			Attempts: []store.AttemptWrite{{StepKey: "s", Attempt: 1, Status: store.AttemptRunning, Owner: "w1", StartedAt: at(time.Second), IdempotencyKey: "r/s"}}})
		noErr(t, "running write", res.Err)
		cur := f.claimOne("w2", "r", at(2*time.Minute)) // w1's lease expired
		eq(t, "attempts used before", cur.AttemptsUsed, 1)
		errJSON := []byte(`{"kind":"interrupted","message":"the worker stopped"}`)
		res = f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(2 * time.Minute), Run: &store.RunUpdate{AttemptsUsed: ptr(0)},
			Steps: []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepPending, Attempts: 1,
				StartedAt: at(time.Second), State: []byte(`{"interrupts":1}`)}},
			Attempts: []store.AttemptWrite{{StepKey: "s", Attempt: 1, Status: store.AttemptInterrupted, Owner: "w1",
				StartedAt: at(time.Second), FinishedAt: at(2 * time.Minute), Error: errJSON, IdempotencyKey: "r/s"}},
			Events: []store.EventWrite{{Kind: "interrupted", StepKey: "s"}}})
		noErr(t, "interrupted write", res.Err)
		eq(t, "attempts used after", f.get("r").AttemptsUsed, 0)
		as := f.attempts("r", "s")
		eq(t, "attempt rows", len(as), 1)
		eq(t, "attempt status", as[0].Status, store.AttemptInterrupted)
		eq(t, "attempt owner", as[0].Owner, "w1")
		timeEq(t, "attempt finished", as[0].FinishedAt, at(2*time.Minute))
		jsonEq(t, "attempt error", as[0].Error, errJSON)
		steps := f.steps("r")
		eq(t, "step rows", len(steps), 1)
		eq(t, "step status", steps[0].Status, store.StepPending)
		jsonEq(t, "step state", steps[0].State, []byte(`{"interrupts":1}`))
	})

	parallel(t, "step get reads one key as the list has it", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		cur := f.claimOne("w", "r", at(0))
		res := f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(time.Second),
			Steps: []store.StepWrite{
				{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1,
					Output: []byte(`{"v":1}`), StartedAt: at(0), FinishedAt: at(time.Second)},
				{Key: "b[2]#3", Step: "b", Index: 2, Iteration: 3, Status: store.StepWaiting,
					WakeAt: at(time.Minute), Detail: "retry 1/3", State: []byte(`{"wait":"retry"}`)},
			}})
		noErr(t, "TransitionCommit", res.Err)
		list := f.steps("r")
		eq(t, "steps", len(list), 2)
		for _, want := range list {
			got, err := f.s.StepGet(f.ctx, "r", want.Key)
			noErr(t, "StepGet "+want.Key, err)
			eq(t, "StepGet "+want.Key, got, want)
		}
		heads, err := f.s.StepHeads(f.ctx, "r")
		noErr(t, "StepHeads", err)
		slices.SortFunc(heads, func(a, b store.StepHead) int { return strings.Compare(a.Key, b.Key) })
		eq(t, "StepHeads", heads, []store.StepHead{
			{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted},
			{Key: "b[2]#3", Step: "b", Index: 2, Iteration: 3, Status: store.StepWaiting},
		})
		heads, err = f.s.StepHeads(f.ctx, "nope")
		noErr(t, "StepHeads of an unknown run", err)
		eq(t, "StepHeads of an unknown run", len(heads), 0)
		_, err = f.s.StepGet(f.ctx, "r", "c")
		isErr(t, "StepGet of a key not begun", err, store.ErrNotFound)
		_, err = f.s.StepGet(f.ctx, "nope", "a")
		isErr(t, "StepGet of an unknown run", err, store.ErrNotFound)
	})

	parallel(t, "zero lease only for unheld runs", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "free"})
		f.insert(store.RunInsertParams{ID: "held"})
		f.claimOne("w", "held", at(0))
		blocked := store.RunBlocked
		res, err := f.s.TransitionCommit(f.ctx, []store.Transition{
			{RunID: "free", Now: at(time.Second), Run: &store.RunUpdate{Status: &blocked, WaitReason: ptr("version")}},
			{RunID: "held", Now: at(time.Second), Run: &store.RunUpdate{Status: &blocked}},
		})
		noErr(t, "TransitionCommit", err)
		noErr(t, "free run", res[0].Err)
		isErr(t, "held run", res[1].Err, store.ErrLeaseLost)
		eq(t, "free run", f.get("free").Status, store.RunBlocked)
		eq(t, "held run", f.get("held").Status, store.RunRunning)

		_, err = f.s.TransitionCommit(f.ctx, []store.Transition{{RunID: "nope", Now: at(time.Second)}})
		isErr(t, "transition of an unknown run", err, store.ErrNotFound)
	})

	parallel(t, "batch of runs in one commit", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"a", "b", "c"} {
			f.insert(store.RunInsertParams{ID: id})
		}
		a := f.claimOne("w", "a", at(0))
		b := f.claimOne("w", "b", at(0))
		c := f.claimOne("w", "c", at(0))
		stale := b.Lease
		stale.Epoch--
		ev := func(kind string) []store.EventWrite { return []store.EventWrite{{Kind: kind}, {Kind: kind + "2"}} }
		res, err := f.s.TransitionCommit(f.ctx, []store.Transition{
			{RunID: "a", Lease: a.Lease, Now: at(time.Second), Events: ev("a"), Run: &store.RunUpdate{AttemptsUsed: ptr(1)}},
			{RunID: "b", Lease: stale, Now: at(time.Second), Events: ev("b"), Run: &store.RunUpdate{AttemptsUsed: ptr(1)}},
			{RunID: "c", Lease: c.Lease, Now: at(time.Second), Events: ev("c"), Run: &store.RunUpdate{AttemptsUsed: ptr(1)}},
		})
		noErr(t, "TransitionCommit", err)
		eq(t, "results", len(res), 3)
		noErr(t, "a", res[0].Err)
		isErr(t, "b", res[1].Err, store.ErrLeaseLost)
		noErr(t, "c", res[2].Err)
		eq(t, "result run ids", [3]string{res[0].RunID, res[1].RunID, res[2].RunID}, [3]string{"a", "b", "c"})
		eq(t, "a attempts used", f.get("a").AttemptsUsed, 1)
		eq(t, "b attempts used", f.get("b").AttemptsUsed, 0)
		eq(t, "c attempts used", f.get("c").AttemptsUsed, 1)
		ids := append(append([]int64{}, res[0].EventIDs...), res[2].EventIDs...)
		eq(t, "event ids", len(ids), 4)
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("event ids %v are not increasing", ids)
			}
		}
		evs := f.events("a")
		eq(t, "a's events", kinds(evs), []string{"a", "a2"})
		eq(t, "a's event ids", []int64{evs[0].ID, evs[1].ID}, res[0].EventIDs)
		eq(t, "b's events", len(f.events("b")), 0)
	})

	parallel(t, "run update", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r", DeadlineAt: at(time.Hour)})
		r := f.claimOne("w", "r", at(0))
		failed := store.RunFailed
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second), Run: &store.RunUpdate{
			Version: ptr("1.0.1"), GraphHash: ptr("h2"), Outputs: []byte(`{"o":1}`), Error: []byte(`{"kind":"x"}`),
			AttemptsUsed: ptr(3), WaitReason: ptr("retry"), DeadlineAt: ptr(time.Time{}), AvailableAt: ptr(at(time.Minute)),
		}})
		got := f.get("r")
		eq(t, "version and hash", got.Version+" "+got.GraphHash, "1.0.1 h2")
		jsonEq(t, "outputs", got.Outputs, []byte(`{"o":1}`))
		jsonEq(t, "error", got.Error, []byte(`{"kind":"x"}`))
		eq(t, "attempts used", got.AttemptsUsed, 3)
		eq(t, "wait reason", got.WaitReason, "retry")
		eq(t, "deadline cleared", got.DeadlineAt.IsZero(), true)
		timeEq(t, "available", got.AvailableAt, at(time.Minute))
		timeEq(t, "updated", got.UpdatedAt, at(time.Second))
		eq(t, "still running and held (no release)", [2]string{string(got.Status), got.Lease.Owner}, [2]string{"running", "w"})

		// Nil fields keep their value; a finish releases the lease.
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(2 * time.Second), Run: &store.RunUpdate{
			Status: &failed, FinishedAt: ptr(at(2 * time.Second)), WaitReason: ptr(""), Release: true,
		}})
		got = f.get("r")
		eq(t, "status", got.Status, store.RunFailed)
		timeEq(t, "finished", got.FinishedAt, at(2*time.Second))
		eq(t, "version kept", got.Version, "1.0.1")
		jsonEq(t, "outputs kept", got.Outputs, []byte(`{"o":1}`))
		eq(t, "attempts kept", got.AttemptsUsed, 3)
		eq(t, "wait reason cleared", got.WaitReason, "")
		eq(t, "released", got.Lease, store.Lease{Epoch: 1})
		eq(t, "lease expiry cleared", got.LeaseExpiresAt.IsZero(), true)
	})

	parallel(t, "steps upsert", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second), Steps: []store.StepWrite{
			{Key: "b", Step: "b", Index: -1, Iteration: -1, Status: store.StepRunning, Attempts: 1, StartedAt: at(time.Second)},
			{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepWaiting, Attempts: 1, StartedAt: at(time.Second),
				WakeAt: at(time.Minute), Detail: "retry 2/4", State: []byte(`{"delay":"1m"}`), Error: []byte(`{"kind":"exit"}`)},
			{Key: "a[3]#2", Step: "a", Index: 3, Iteration: 2, Status: store.StepPending},
		}})
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(2 * time.Second), Steps: []store.StepWrite{
			{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 2,
				Output: []byte(`{"stdout":"ok"}`), FinishedAt: at(2 * time.Second)},
		}})
		steps := f.steps("r")
		var keys []string
		for _, s := range steps {
			keys = append(keys, s.Key)
		}
		eq(t, "keys in first-write order", keys, []string{"b", "a", "a[3]#2"})
		a := steps[1]
		eq(t, "run id", a.RunID, "r")
		eq(t, "status and attempts", [2]any{a.Status, a.Attempts}, [2]any{store.StepCompleted, 2})
		jsonEq(t, "output", a.Output, []byte(`{"stdout":"ok"}`))
		timeEq(t, "started kept when the write leaves it zero", a.StartedAt, at(time.Second))
		timeEq(t, "finished", a.FinishedAt, at(2*time.Second))
		eq(t, "wake cleared", a.WakeAt.IsZero(), true)
		eq(t, "detail cleared", a.Detail, "")
		eq(t, "state cleared", len(a.State), 0)
		eq(t, "error cleared", len(a.Error), 0)
		item := steps[2]
		eq(t, "index and iteration", [2]int{item.Index, item.Iteration}, [2]int{3, 2})
		eq(t, "step name", item.Step, "a")
		b := steps[0]
		eq(t, "untouched step", b.Status, store.StepRunning)
	})

	parallel(t, "attempts insert then update", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second), Attempts: []store.AttemptWrite{
			{StepKey: "s", Attempt: 1, Status: store.AttemptRunning, Owner: "w", StartedAt: at(time.Second), IdempotencyKey: "r/s/1"},
			{StepKey: "t", Attempt: 1, Status: store.AttemptRunning, Owner: "w", StartedAt: at(time.Second)},
		}})
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(2 * time.Second), Attempts: []store.AttemptWrite{
			{StepKey: "s", Attempt: 1, Status: store.AttemptFailed, FinishedAt: at(2 * time.Second), Error: []byte(`{"kind":"exit","message":"1"}`)},
			{StepKey: "s", Attempt: 2, Status: store.AttemptRunning, Owner: "w", StartedAt: at(2 * time.Second), IdempotencyKey: "r/s/2"},
		}})
		as := f.attempts("r", "s")
		eq(t, "attempts of s", len(as), 2)
		a1 := as[0]
		eq(t, "attempt", [2]any{a1.Attempt, a1.Status}, [2]any{1, store.AttemptFailed})
		eq(t, "owner kept", a1.Owner, "w")
		eq(t, "idempotency key kept", a1.IdempotencyKey, "r/s/1")
		timeEq(t, "started kept", a1.StartedAt, at(time.Second))
		timeEq(t, "finished", a1.FinishedAt, at(2*time.Second))
		jsonEq(t, "error", a1.Error, []byte(`{"kind":"exit","message":"1"}`))
		eq(t, "run id and key", a1.RunID+" "+a1.StepKey, "r s")
		all := f.attempts("r", "")
		var got []string
		for _, a := range all {
			got = append(got, a.StepKey+string(rune('0'+a.Attempt)))
		}
		eq(t, "all attempts in first-write order", got, []string{"s1", "t1", "s2"})
	})

	parallel(t, "children", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "p"})
		p := f.claimOne("w", "p", at(0))
		f.commit(store.Transition{RunID: "p", Lease: p.Lease, Now: at(time.Second), Children: []store.RunInsertParams{
			{ID: "c1", Workflow: "sub", Version: "2.0.0", GraphHash: "hs", ParentRunID: "p", ParentStepKey: "call[0]", Now: at(time.Second),
				Inputs: []byte(`{"i":0}`), Events: []store.EventWrite{{Kind: "created"}}},
		}})
		c := f.get("c1")
		eq(t, "child", [4]string{c.Workflow, c.ParentRunID, c.ParentStepKey, c.RootRunID}, [4]string{"sub", "p", "call[0]", "p"})
		eq(t, "child status", c.Status, store.RunPending)
		jsonEq(t, "child inputs", c.Inputs, []byte(`{"i":0}`))
		eq(t, "child events", kinds(f.events("c1")), []string{"created"})
		// A grandchild created by the child inherits the root.
		cl := f.claimOne("w", "c1", at(time.Second))
		f.commit(store.Transition{RunID: "c1", Lease: cl.Lease, Now: at(2 * time.Second), Children: []store.RunInsertParams{
			{ID: "g", Workflow: "sub", Version: "2.0.0", GraphHash: "hs", ParentRunID: "c1", Now: at(2 * time.Second)},
		}})
		eq(t, "grandchild root", f.get("g").RootRunID, "p")
	})

	parallel(t, "signals consumed", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		g1, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Name: "approve", Payload: []byte(`{"ok":true}`), Now: at(time.Second)})
		noErr(t, "SignalSend", err)
		g2, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Name: "approve", Now: at(2 * time.Second)})
		noErr(t, "SignalSend", err)
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(3 * time.Second),
			ConsumeSignals: []store.SignalConsume{{SignalID: g1.ID, StepKey: "gate"}}})
		pending, err := f.s.SignalList(f.ctx, "r", true)
		noErr(t, "SignalList", err)
		eq(t, "pending", len(pending), 1)
		eq(t, "pending id", pending[0].ID, g2.ID)
		all, err := f.s.SignalList(f.ctx, "r", false)
		noErr(t, "SignalList", err)
		eq(t, "consumed by", [2]string{all[0].ConsumedBy, all[1].ConsumedBy}, [2]string{"gate", ""})

		// Consuming it again fails the whole batch; nothing of it applies.
		_, err = f.s.TransitionCommit(f.ctx, []store.Transition{{RunID: "r", Lease: r.Lease, Now: at(4 * time.Second),
			Events:         []store.EventWrite{{Kind: "should_not_exist"}},
			ConsumeSignals: []store.SignalConsume{{SignalID: g1.ID, StepKey: "gate"}}}})
		isErr(t, "consuming a consumed signal", err, store.ErrConflict)
		for _, e := range f.events("r") {
			if e.Kind == "should_not_exist" {
				t.Fatal("the event of a failed batch was written")
			}
		}
	})

	parallel(t, "wake", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "parent"})
		f.insert(store.RunInsertParams{ID: "child", ParentRunID: "parent"})
		p := f.claimOne("w", "parent", at(0))
		waiting := store.RunWaiting
		park := func(r store.Run, now time.Time) {
			t.Helper()
			f.commit(store.Transition{RunID: r.ID, Lease: r.Lease, Now: now, Run: &store.RunUpdate{
				Status: &waiting, AvailableAt: ptr(at(24 * time.Hour)), WaitReason: ptr("child"), Release: true}})
		}
		park(p, at(time.Second))
		c := f.claimOne("w", "child", at(time.Second))
		done := store.RunCompleted
		f.commit(store.Transition{RunID: "child", Lease: c.Lease, Now: at(time.Minute),
			Run: &store.RunUpdate{Status: &done, Release: true}, Wake: []string{"parent"}})
		timeEq(t, "woken parent available", f.get("parent").AvailableAt, at(time.Minute))

		// A wake that lands while the parent is held makes its next park due at once.
		p = f.claimOne("w", "parent", at(2*time.Minute))
		f.insert(store.RunInsertParams{ID: "child2", ParentRunID: "parent"})
		c2 := f.claimOne("w", "child2", at(2*time.Minute))
		f.commit(store.Transition{RunID: "child2", Lease: c2.Lease, Now: at(3 * time.Minute),
			Run: &store.RunUpdate{Status: &done, Release: true}, Wake: []string{"parent"}})
		park(p, at(4*time.Minute))
		timeEq(t, "park after a wake", f.get("parent").AvailableAt, at(4*time.Minute))
		// The next claim has seen the news: a later park is not pulled forward.
		p = f.claimOne("w", "parent", at(5*time.Minute))
		park(p, at(6*time.Minute))
		timeEq(t, "park after a fresh claim", f.get("parent").AvailableAt, at(24*time.Hour))

		// A finished run is not woken.
		f.commit(store.Transition{RunID: "child", Now: at(7 * time.Minute), Wake: []string{"child2"}})
		timeEq(t, "finished run untouched", f.get("child2").UpdatedAt, at(3*time.Minute))
	})
}
