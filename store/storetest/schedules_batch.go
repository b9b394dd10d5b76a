package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testScheduleFireBatch: a batch fires each slot as ScheduleFire does, in
// one transaction, and a fire that fails writes nothing and loses none of
// the others.
func testScheduleFireBatch(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "a batch fires each slot on its own", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)), hourly("b", at(time.Hour)), hourly("c", at(time.Hour)))
		_, err := f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "a1-before", at(time.Hour), at(2*time.Hour)))
		noErr(t, "firing a's first slot alone", err)
		_, err = f.s.RunInsert(f.ctx, store.RunInsertParams{ID: "taken", Workflow: "wf", Version: "1.0.0", GraphHash: "h1.0.0",
			Inputs: mustJSON(map[string]string{}), Now: t0})
		noErr(t, "RunInsert taken", err)

		a2 := fireParams("a", "1.0.0", "a2", at(2*time.Hour), at(3*time.Hour))
		a2.Overlap = "allow"
		ps := []store.ScheduleFireParams{
			fireParams("c", "1.0.0", "c1", at(time.Hour), at(2*time.Hour)),    // 0: fires
			fireParams("b", "1.0.0", "taken", at(time.Hour), at(2*time.Hour)), // 1: its run id exists: fails
			a2, // 2: fires (given before a's first slot)
			fireParams("a", "1.0.0", "a1-again", at(time.Hour), at(2*time.Hour)), // 3: already fired
			fireParams("b", "1.0.0", "b2", at(2*time.Hour), at(3*time.Hour)),     // 4: after b's failed slot: not tried
			fireParams("zz", "1.0.0", "zz1", at(time.Hour), at(2*time.Hour)),     // 5: unknown schedule
			fireParams("c", "1.0.0", "c2", at(2*time.Hour), at(3*time.Hour)),     // 6: c's overlap is skip, c1 unfinished
		}
		ps[6].Overlap = store.OverlapSkip
		out, err := f.s.ScheduleFireBatch(f.ctx, ps)
		noErr(t, "ScheduleFireBatch", err)
		eq(t, "outcomes", len(out), len(ps))
		for _, i := range []int{0, 2, 6} {
			noErr(t, fmt.Sprintf("outcome %d", i), out[i].Err)
		}
		eq(t, "c1 fired", []any{out[0].Result.Fire.Status, out[0].Result.Run.ID}, []any{store.FireFired, "c1"})
		eq(t, "a2 fired", []any{out[2].Result.Fire.Status, out[2].Result.Run.ID, out[2].Result.Unfinished},
			[]any{store.FireFired, "a2", []string{"a1-before"}})
		eq(t, "c2 skipped for the overlap", []any{out[6].Result.Fire.Status, out[6].Result.Fire.Reason, out[6].Result.Run.ID, out[6].Result.Unfinished},
			[]any{store.FireSkipped, "overlap", "", []string{"c1"}})
		isErr(t, "b's slot whose run exists", out[1].Err, store.ErrConflict)
		isErr(t, "a's slot fired before", out[3].Err, store.ErrAlreadyFired)
		isErr(t, "b's slot after the failed one", out[4].Err, store.ErrNotTried)
		isErr(t, "an unknown schedule", out[5].Err, store.ErrNotFound)

		// What failed wrote nothing: b is where it was, with no fire.
		b := f.schedule("b")
		eq(t, "b's last slot", b.LastSlot.IsZero(), true)
		timeEq(t, "b's next", b.NextAt, at(time.Hour))
		bf, err := f.s.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: "b"})
		noErr(t, "ScheduleFireList b", err)
		eq(t, "b's fires", len(bf), 0)
		for _, id := range []string{"a1-again", "b2", "zz1"} {
			_, err := f.s.RunGet(f.ctx, id)
			isErr(t, "run "+id, err, store.ErrNotFound)
		}
		events, err := f.s.EventList(f.ctx, store.EventListParams{RunID: "taken"})
		noErr(t, "EventList taken", err)
		eq(t, "events of the run the failed fire named", len(events), 0)
		// What succeeded is there, with its first event.
		for _, id := range []string{"c1", "a2"} {
			r, err := f.s.RunGet(f.ctx, id)
			noErr(t, "run "+id, err)
			eq(t, "run "+id+" pending", r.Status, store.RunPending)
			evs, err := f.s.EventList(f.ctx, store.EventListParams{RunID: id})
			noErr(t, "EventList "+id, err)
			eq(t, "events of "+id, len(evs), 1)
		}
		a := f.schedule("a")
		timeEq(t, "a's last slot", a.LastSlot, at(2*time.Hour))
		eq(t, "a's last run", a.LastRunID, "a2")
		c := f.schedule("c")
		timeEq(t, "c's last slot", c.LastSlot, at(2*time.Hour))
		eq(t, "c's last run", c.LastRunID, "c1")

		// An empty batch is no error.
		out, err = f.s.ScheduleFireBatch(f.ctx, nil)
		noErr(t, "an empty batch", err)
		eq(t, "outcomes of an empty batch", len(out), 0)
	})
}

// testFireBatchRace fires the same slots of three schedules from eight
// goroutines at once, four on each handle, each with a batch of its own in
// its own order: every slot is fired exactly once, by one batch, and the
// others' fires of it are ErrAlreadyFired and start no run.
func testFireBatchRace(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	s1, s2 := newPair(t)
	f := &fixture{t: t, ctx: t.Context(), s: s1}
	f.version("1.0.0")
	scheds := []string{"a", "b", "c"}
	var defs []store.ScheduleDef
	for _, n := range scheds {
		defs = append(defs, hourly(n, at(time.Hour)))
	}
	f.activate("1.0.0", t0, defs...)
	const slots, racers, rounds = 4, 8, 3
	type item struct{ sched, slot int }
	for round := range rounds {
		var items []item
		for si := range scheds {
			for k := 1; k <= slots; k++ {
				items = append(items, item{si, round*slots + k})
			}
		}
		outs := make([][]store.ScheduleFireOutcome, racers)
		given := make([][]item, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			mine := append([]item(nil), items...)
			rand.New(rand.NewPCG(uint64(i), uint64(round))).Shuffle(len(mine), func(a, b int) { mine[a], mine[b] = mine[b], mine[a] })
			given[i] = mine
			ps := make([]store.ScheduleFireParams, len(mine))
			for j, it := range mine {
				slot := at(time.Duration(it.slot) * time.Hour)
				ps[j] = fireParams(scheds[it.sched], "1.0.0", fmt.Sprintf("r%s%d-%d", scheds[it.sched], it.slot, i), slot, slot.Add(time.Hour))
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				outs[i], errs[i] = s.ScheduleFireBatch(f.ctx, ps)
			}()
		}
		close(start)
		wg.Wait()
		won := map[item]int{}
		for i := range racers {
			noErr(t, fmt.Sprintf("round %d racer %d's batch", round, i), errs[i])
			for j, o := range outs[i] {
				it := given[i][j]
				id := fmt.Sprintf("r%s%d-%d", scheds[it.sched], it.slot, i)
				switch {
				case o.Err == nil:
					if o.Result.Run.ID != id {
						t.Fatalf("racer %d slot %v: fired with run %q, want %q", i, it, o.Result.Run.ID, id)
					}
					won[it]++
				case !errors.Is(o.Err, store.ErrAlreadyFired):
					t.Fatalf("round %d racer %d slot %v: %v", round, i, it, o.Err)
				}
				_, gerr := s2.RunGet(f.ctx, id)
				if (gerr == nil) != (o.Err == nil) {
					t.Fatalf("racer %d slot %v: fire error %v, run read %v: a run exists exactly for the winning fire", i, it, o.Err, gerr)
				}
			}
		}
		for _, it := range items {
			if won[it] != 1 {
				t.Fatalf("round %d slot %v: %d fires succeeded, want exactly 1", round, it, won[it])
			}
		}
	}
	for _, n := range scheds {
		fires, err := s2.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: n})
		noErr(t, "ScheduleFireList "+n, err)
		eq(t, "fires recorded of "+n, len(fires), slots*rounds)
		timeEq(t, "last slot of "+n, f.schedule(n).LastSlot, at(slots*rounds*time.Hour))
	}
	runs, err := s1.RunList(f.ctx, store.RunListParams{Workflow: "wf"})
	noErr(t, "RunList", err)
	eq(t, "runs started", len(runs), slots*rounds*len(scheds))
}
