package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testRuns(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "insert and get", newStore, func(t *testing.T, f *fixture) {
		r := f.insert(store.RunInsertParams{
			ID: "r1", Workflow: "deploy", Version: "1.2.0", GraphHash: "hash", Key: "k1",
			Inputs: []byte(`{"env":"prod"}`), Now: at(0), AvailableAt: at(time.Second), DeadlineAt: at(time.Hour),
			Events: []store.EventWrite{{Kind: "created", Data: []byte(`{"by":"test"}`)}},
		})
		for _, got := range []store.Run{r, f.get("r1")} {
			eq(t, "id", got.ID, "r1")
			eq(t, "workflow@version", got.Workflow+"@"+got.Version, "deploy@1.2.0")
			eq(t, "hash", got.GraphHash, "hash")
			eq(t, "key", got.Key, "k1")
			eq(t, "status", got.Status, store.RunPending)
			jsonEq(t, "inputs", got.Inputs, []byte(`{"env":"prod"}`))
			eq(t, "outputs", len(got.Outputs), 0)
			eq(t, "error", len(got.Error), 0)
			timeEq(t, "created", got.CreatedAt, at(0))
			timeEq(t, "updated", got.UpdatedAt, at(0))
			timeEq(t, "available", got.AvailableAt, at(time.Second))
			timeEq(t, "deadline", got.DeadlineAt, at(time.Hour))
			eq(t, "started is zero", got.StartedAt.IsZero(), true)
			eq(t, "finished is zero", got.FinishedAt.IsZero(), true)
			eq(t, "lease", got.Lease, store.Lease{})
			eq(t, "lease expiry is zero", got.LeaseExpiresAt.IsZero(), true)
			eq(t, "root", got.RootRunID, "r1")
			eq(t, "parent", got.ParentRunID, "")
			eq(t, "attempts used", got.AttemptsUsed, 0)
			eq(t, "cancel requested", got.CancelRequested, false)
		}
		evs := f.events("r1")
		eq(t, "events", kinds(evs), []string{"created"})
		jsonEq(t, "event data", evs[0].Data, []byte(`{"by":"test"}`))
		timeEq(t, "event time", evs[0].At, at(0))

		// A zero AvailableAt means now.
		r2 := f.insert(store.RunInsertParams{ID: "r2", Now: at(5 * time.Second)})
		timeEq(t, "available of a run inserted without one", r2.AvailableAt, at(5*time.Second))
		eq(t, "key of a run without one", r2.Key, "")

		_, err := f.s.RunInsert(f.ctx, store.RunInsertParams{ID: "r1", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: at(0)})
		isErr(t, "RunInsert of an existing id", err, store.ErrConflict)
		_, err = f.s.RunGet(f.ctx, "nope")
		isErr(t, "RunGet of a missing run", err, store.ErrNotFound)
	})

	parallel(t, "work dir and attempt", newStore, func(t *testing.T, f *fixture) {
		r := f.insert(store.RunInsertParams{ID: "wd", WorkDir: "/srv/flows/deploy"})
		for _, got := range []store.Run{r, f.get("wd")} {
			eq(t, "work dir", got.WorkDir, "/srv/flows/deploy")
			eq(t, "attempt of a new run", got.Attempt, 1)
		}
		f.commit(store.Transition{RunID: "wd", Children: []store.RunInsertParams{{ID: "wd-child", Workflow: "wf", Version: "1.0.0",
			GraphHash: "h1", Now: at(time.Second), ParentRunID: "wd", ParentStepKey: "c", WorkDir: "/srv/flows/deploy"}},
			Now: at(time.Second)})
		eq(t, "work dir of a child inserted by a transition", f.get("wd-child").WorkDir, "/srv/flows/deploy")
		eq(t, "work dir of a run inserted without one", f.insert(store.RunInsertParams{ID: "nowd"}).WorkDir, "")

		f.commit(store.Transition{RunID: "wd", Run: &store.RunUpdate{Attempt: ptr(2)}, Now: at(2 * time.Second)})
		eq(t, "attempt after an update", f.get("wd").Attempt, 2)
		f.commit(store.Transition{RunID: "wd", Run: &store.RunUpdate{Status: ptr(store.RunWaiting)}, Now: at(3 * time.Second)})
		eq(t, "attempt after an update that does not set it", f.get("wd").Attempt, 2)
	})

	parallel(t, "find by prefix", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"abc123", "abc456", "abd789", "x"} {
			f.insert(store.RunInsertParams{ID: id})
		}
		for prefix, want := range map[string]string{"abc1": "abc123", "abd": "abd789", "abc456": "abc456", "x": "x"} {
			r, err := f.s.RunFind(f.ctx, prefix)
			noErr(t, "RunFind("+prefix+")", err)
			eq(t, "RunFind("+prefix+")", r.ID, want)
		}
		_, err := f.s.RunFind(f.ctx, "abc")
		isErr(t, "RunFind of a shared prefix", err, store.ErrAmbiguous)
		_, err = f.s.RunFind(f.ctx, "ab")
		isErr(t, "RunFind of a shared prefix", err, store.ErrAmbiguous)
		_, err = f.s.RunFind(f.ctx, "abe")
		isErr(t, "RunFind of no run", err, store.ErrNotFound)
		_, err = f.s.RunFind(f.ctx, "abc1234")
		isErr(t, "RunFind of a longer id", err, store.ErrNotFound)
	})

	parallel(t, "exact id wins over prefix", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "ab"})
		f.insert(store.RunInsertParams{ID: "abc"})
		r, err := f.s.RunFind(f.ctx, "ab")
		noErr(t, "RunFind", err)
		eq(t, "RunFind of a full id that is also a prefix", r.ID, "ab")
	})

	parallel(t, "by key", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "old", Workflow: "deploy", Key: "k", Now: at(0)})
		f.insert(store.RunInsertParams{ID: "new", Workflow: "deploy", Key: "k", Now: at(time.Minute)})
		f.insert(store.RunInsertParams{ID: "other", Workflow: "build", Key: "k", Now: at(2 * time.Minute)})
		f.insert(store.RunInsertParams{ID: "nokey", Workflow: "deploy", Now: at(3 * time.Minute)})
		r, err := f.s.RunGetByKey(f.ctx, "deploy", "k")
		noErr(t, "RunGetByKey", err)
		eq(t, "newest run with the key", r.ID, "new")
		_, err = f.s.RunGetByKey(f.ctx, "deploy", "zzz")
		isErr(t, "RunGetByKey of an unknown key", err, store.ErrNotFound)
		_, err = f.s.RunGetByKey(f.ctx, "deploy", "")
		isErr(t, "RunGetByKey of the empty key", err, store.ErrNotFound)
	})

	parallel(t, "children", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "parent"})
		f.insert(store.RunInsertParams{ID: "c2", ParentRunID: "parent", ParentStepKey: "s[1]", RootRunID: "parent", Now: at(2 * time.Second)})
		f.insert(store.RunInsertParams{ID: "c1", ParentRunID: "parent", ParentStepKey: "s[0]", RootRunID: "parent", Now: at(time.Second)})
		f.insert(store.RunInsertParams{ID: "grandchild", ParentRunID: "c1", ParentStepKey: "x", RootRunID: "parent", Now: at(3 * time.Second)})
		cs, err := f.s.RunChildren(f.ctx, "parent")
		noErr(t, "RunChildren", err)
		eq(t, "children, oldest first", ids(cs), []string{"c1", "c2"})
		eq(t, "parent step key", cs[0].ParentStepKey, "s[0]")
		eq(t, "root", cs[0].RootRunID, "parent")
		eq(t, "grandchild root", f.get("grandchild").RootRunID, "parent")
		none, err := f.s.RunChildren(f.ctx, "c2")
		noErr(t, "RunChildren of a leaf", err)
		eq(t, "children of a leaf", len(none), 0)
	})
}

func testRunList(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "statuses key since top level", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "old", Key: "a", Now: at(0)})
		f.insert(store.RunInsertParams{ID: "mid", Key: "b", Now: at(time.Minute)})
		f.insert(store.RunInsertParams{ID: "new", Key: "a", Now: at(2 * time.Minute)})
		f.insert(store.RunInsertParams{ID: "kid", Key: "c", ParentRunID: "new", ParentStepKey: "s", Now: at(3 * time.Minute)})
		run := f.claimOne("w", "mid", at(4*time.Minute))
		failed := store.RunFailed
		f.commit(store.Transition{RunID: "mid", Lease: run.Lease, Now: at(5 * time.Minute),
			Run: &store.RunUpdate{Status: &failed, FinishedAt: ptr(at(5 * time.Minute)), Release: true,
				Error: json.RawMessage(`{"kind":"timeout","message":"Gateway TIMEOUT after 30s"}`)}})
		list := func(p store.RunListParams) []string {
			t.Helper()
			rs, err := f.s.RunList(f.ctx, p)
			noErr(t, "RunList", err)
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		eq(t, "two statuses", list(store.RunListParams{Statuses: []store.RunStatus{store.RunFailed, store.RunPending}}), []string{"kid", "new", "mid", "old"})
		eq(t, "one of them", list(store.RunListParams{Statuses: []store.RunStatus{store.RunFailed}}), []string{"mid"})
		eq(t, "Status and Statuses", list(store.RunListParams{Status: store.RunFailed, Statuses: []store.RunStatus{store.RunFailed, store.RunCompleted}}), []string{"mid"})
		eq(t, "key", list(store.RunListParams{Key: "a"}), []string{"new", "old"})
		eq(t, "since", list(store.RunListParams{Since: at(time.Minute)}), []string{"kid", "new", "mid"})
		eq(t, "until", list(store.RunListParams{Until: at(2 * time.Minute)}), []string{"mid", "old"})
		eq(t, "since and until", list(store.RunListParams{Since: at(time.Minute), Until: at(3 * time.Minute)}), []string{"new", "mid"})
		eq(t, "top level", list(store.RunListParams{TopLevel: true}), []string{"new", "mid", "old"})
		eq(t, "all together", list(store.RunListParams{TopLevel: true, Key: "a", Since: at(time.Second), Statuses: []store.RunStatus{store.RunPending}}), []string{"new"})
		eq(t, "text in an error, any case", list(store.RunListParams{Text: "gateway timeout"}), []string{"mid"})
		eq(t, "text in a key", list(store.RunListParams{Text: "C"}), []string{"kid"})
		eq(t, "text in an id", list(store.RunListParams{Text: "ol"}), []string{"old"})
		eq(t, "text is not a pattern", list(store.RunListParams{Text: "%"}), []string{})
		eq(t, "text and top level", list(store.RunListParams{Text: "c", TopLevel: true}), []string{})
	})
	parallel(t, "text search reads the error's message", newStore, func(t *testing.T, f *fixture) {
		// api.md §6: the runs whose id, key or error holds the text,
		// ignoring case. The error's message, not its JSON: not the field
		// names, nor the escapes json.Marshal writes for <, > and &.
		fail := func(id, key string, at time.Time, runErr string) {
			t.Helper()
			f.insert(store.RunInsertParams{ID: id, Key: key, Now: at})
			run := f.claimOne("w", id, at)
			failed := store.RunFailed
			f.commit(store.Transition{RunID: id, Lease: run.Lease, Now: at,
				Run: &store.RunUpdate{Status: &failed, FinishedAt: ptr(at), Release: true, Error: json.RawMessage(runErr)}})
		}
		fail("r1", "", at(0), `{"kind":"validation","message":"field \u003cscript\u003e is not allowed","type":"about:blank"}`)
		fail("r2", "", at(time.Second), `{"kind":"http","message":"Zahlung ÜBER dem Limit"}`)
		fail("r3", "Straße-Ärger", at(2*time.Second), `{"kind":"timeout","message":"gateway timeout"}`)
		f.insert(store.RunInsertParams{ID: "r4", Key: "plain", Now: at(3 * time.Second)})
		_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r4", Now: at(4 * time.Second)})
		noErr(t, "RunCancel", err)
		list := func(text string) []string {
			t.Helper()
			rs, err := f.s.RunList(f.ctx, store.RunListParams{Text: text})
			noErr(t, "RunList", err)
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		eq(t, "a field name of the error's JSON", list("kind"), []string{})
		eq(t, "another field name", list("message"), []string{})
		eq(t, "a quote of the JSON", list(`"`), []string{})
		eq(t, "the kind's value is not the message", list("validation"), []string{})
		eq(t, "text the JSON escapes", list("<script>"), []string{"r1"})
		eq(t, "non-ASCII text as stored", list("ÜBER"), []string{"r2"})
		eq(t, "non-ASCII text in another case", list("über dem"), []string{"r2"})
		eq(t, "the message of a canceled run", list("By Request"), []string{"r4"})
		eq(t, "a non-ASCII key as typed", list("Straße-Ärger"), []string{"r3"})
		eq(t, "an ASCII part of a key in another case", list("STRA"), []string{"r3"})
	})
	parallel(t, "order filters paging counts", newStore, func(t *testing.T, f *fixture) {
		// r0..r5, one second apart; r2 and r3 share a created time (id breaks the tie).
		created := []time.Duration{0, time.Second, 2 * time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
		for i, c := range created {
			wf := "deploy"
			if i%2 == 1 {
				wf = "build"
			}
			f.insert(store.RunInsertParams{ID: fmt.Sprintf("r%d", i), Workflow: wf, Key: fmt.Sprintf("k%d", i), Now: at(c)})
		}
		// r4 gets steps: 3 top-level (2 done), plus foreach items and
		// until iterations that are not counted.
		run := f.claimOne("w", "r4", at(10*time.Second))
		done := store.RunCompleted
		f.commit(store.Transition{RunID: "r4", Lease: run.Lease, Now: at(11 * time.Second),
			Run: &store.RunUpdate{Status: &done, FinishedAt: ptr(at(11 * time.Second)), Release: true},
			Steps: []store.StepWrite{
				{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted},
				{Key: "b", Step: "b", Index: -1, Iteration: -1, Status: store.StepSkipped},
				{Key: "c", Step: "c", Index: -1, Iteration: -1, Status: store.StepRunning},
				{Key: "c[0]", Step: "c", Index: 0, Iteration: -1, Status: store.StepCompleted},
				{Key: "c[1]", Step: "c", Index: 1, Iteration: -1, Status: store.StepRunning},
				{Key: "d#0", Step: "d", Index: -1, Iteration: 0, Status: store.StepCompleted},
				// A saga's rows (store.GraphStep) are not steps of the graph.
				{Key: "~compensate", Step: "~compensate", Index: -1, Iteration: -1, Status: store.StepCompleted},
				{Key: "a~compensate", Step: "a~compensate", Index: -1, Iteration: -1, Status: store.StepCompleted},
			}})

		list := func(p store.RunListParams) []string {
			t.Helper()
			rs, err := f.s.RunList(f.ctx, p)
			noErr(t, "RunList", err)
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		eq(t, "all, newest first", list(store.RunListParams{}), []string{"r5", "r4", "r3", "r2", "r1", "r0"})
		eq(t, "limit", list(store.RunListParams{Limit: 2}), []string{"r5", "r4"})
		eq(t, "page after r3", list(store.RunListParams{Limit: 2, BeforeID: "r3"}), []string{"r2", "r1"})
		eq(t, "page after r2", list(store.RunListParams{BeforeID: "r2"}), []string{"r1", "r0"})
		eq(t, "workflow", list(store.RunListParams{Workflow: "build"}), []string{"r5", "r3", "r1"})
		eq(t, "status", list(store.RunListParams{Status: store.RunCompleted}), []string{"r4"})
		eq(t, "status and workflow", list(store.RunListParams{Status: store.RunPending, Workflow: "deploy"}), []string{"r2", "r0"})
		eq(t, "no match", list(store.RunListParams{Workflow: "nothing"}), []string{})
		eq(t, "id prefix", list(store.RunListParams{IDPrefix: "r"}), []string{"r5", "r4", "r3", "r2", "r1", "r0"})
		eq(t, "id prefix of one", list(store.RunListParams{IDPrefix: "r3"}), []string{"r3"})
		eq(t, "id prefix and workflow", list(store.RunListParams{IDPrefix: "r", Workflow: "build", Limit: 2}), []string{"r5", "r3"})
		eq(t, "id prefix of none", list(store.RunListParams{IDPrefix: "r6"}), []string{})
		eq(t, "id prefix is not a pattern", list(store.RunListParams{IDPrefix: "_"}), []string{})
		eq(t, "id prefix is not a pattern", list(store.RunListParams{IDPrefix: "%"}), []string{})
		eq(t, "id prefix is case-sensitive", list(store.RunListParams{IDPrefix: "R"}), []string{})

		rs, err := f.s.RunList(f.ctx, store.RunListParams{Limit: 3})
		noErr(t, "RunList", err)
		r4 := rs[1]
		eq(t, "summary", [3]string{r4.ID, r4.Workflow, r4.Key}, [3]string{"r4", "deploy", "k4"})
		eq(t, "summary version and status", r4.Version+" "+string(r4.Status), "1.0.0 completed")
		timeEq(t, "summary created", r4.CreatedAt, at(3*time.Second))
		timeEq(t, "summary finished", r4.FinishedAt, at(11*time.Second))
		eq(t, "steps total/done", [2]int{r4.StepsTotal, r4.StepsDone}, [2]int{3, 2})
		eq(t, "steps of a run without steps", [2]int{rs[0].StepsTotal, rs[0].StepsDone}, [2]int{0, 0})

		// With its version stored with a step count, a run's total is the
		// size of its graph, not the steps started: r4 has 3 rows of its 5
		// steps, r2 (pending) none. Storing the version again records the
		// count of a version stored without one.
		_, err = f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "deploy", Version: "1.0.0", Major: 1,
			Hash: "h1", Graph: []byte(`{}`), Now: at(0)})
		noErr(t, "VersionPut without a step count", err)
		_, err = f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "deploy", Version: "1.0.0", Major: 1,
			Hash: "h1", Graph: []byte(`{}`), Steps: 5, Now: at(0)})
		noErr(t, "VersionPut again, with the step count", err)
		rs, err = f.s.RunList(f.ctx, store.RunListParams{Workflow: "deploy"})
		noErr(t, "RunList", err)
		got := map[string][2]int{}
		for _, r := range rs {
			got[r.ID] = [2]int{r.StepsTotal, r.StepsDone}
		}
		eq(t, "steps total/done from the graph", got, map[string][2]int{"r4": {5, 2}, "r2": {5, 0}, "r0": {5, 0}})
	})
	parallel(t, "steps a migration dropped are not counted", newStore, func(t *testing.T, f *fixture) {
		// A run of 1.0.0 (a, b, c completed, w waiting) migrated to 2.0.0,
		// whose graph has only w: w is reset to pending and a, b, c are
		// dropped, their rows kept. The listing said 3/1.
		for _, v := range []struct {
			version string
			steps   int
		}{{"1.0.0", 4}, {"2.0.0", 1}} {
			_, err := f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "wf", Version: v.version, Major: int(v.version[0] - '0'),
				Hash: "h" + v.version, Graph: []byte(`{}`), Steps: v.steps, Now: at(0)})
			noErr(t, "VersionPut", err)
		}
		f.insert(store.RunInsertParams{ID: "m", Version: "1.0.0", GraphHash: "h1.0.0", Now: at(0)})
		f.insert(store.RunInsertParams{ID: "back", Version: "1.0.0", GraphHash: "h1.0.0", Now: at(time.Second)})
		for _, id := range []string{"m", "back"} {
			run := f.claimOne("w", id, at(time.Second))
			waiting := store.RunWaiting
			f.commit(store.Transition{RunID: id, Lease: run.Lease, Now: at(2 * time.Second),
				Run: &store.RunUpdate{Status: &waiting, Release: true},
				Steps: []store.StepWrite{
					{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted, Output: json.RawMessage(`1`)},
					{Key: "b", Step: "b", Index: -1, Iteration: -1, Status: store.StepCompleted},
					{Key: "c", Step: "c", Index: -1, Iteration: -1, Status: store.StepCompleted},
					{Key: "w", Step: "w", Index: -1, Iteration: -1, Status: store.StepWaiting},
					{Key: "comp~", Step: "comp~", Index: -1, Iteration: -1, Status: store.StepCompleted},
				}})
		}
		counts := func() map[string][2]int {
			t.Helper()
			rs, err := f.s.RunList(f.ctx, store.RunListParams{})
			noErr(t, "RunList", err)
			got := map[string][2]int{}
			for _, r := range rs {
				got[r.ID] = [2]int{r.StepsTotal, r.StepsDone}
			}
			return got
		}
		eq(t, "before the migration", counts(), map[string][2]int{"m": {4, 3}, "back": {4, 3}})
		pending := store.RunPending
		for _, id := range []string{"m", "back"} {
			f.commit(store.Transition{RunID: id, Now: at(3 * time.Second),
				Expect: &store.RunExpect{Status: store.RunWaiting, Version: "1.0.0", GraphHash: "h1.0.0"},
				Run:    &store.RunUpdate{Status: &pending, Version: ptr("2.0.0"), GraphHash: ptr("h2.0.0")},
				Steps:  []store.StepWrite{{Key: "w", Step: "w", Index: -1, Iteration: -1, Status: store.StepPending}},
				// The engine's own row is never marked, nor counted.
				DropSteps: []string{"a", "b", "c", "comp~"}})
		}
		eq(t, "after the migration, only w counts", counts(), map[string][2]int{"m": {1, 0}, "back": {1, 0}})
		steps, err := f.s.StepList(f.ctx, "m")
		noErr(t, "StepList", err)
		kept := map[string]string{}
		for _, st := range steps {
			kept[st.Key] = string(st.Status) + " " + string(st.Output)
		}
		eq(t, "the dropped rows are kept", kept, map[string]string{"a": "completed 1", "b": "completed ", "c": "completed ", "w": "pending ", "comp~": "completed "})

		// Migrated back to 1.0.0, the steps written again count again.
		f.commit(store.Transition{RunID: "back", Now: at(4 * time.Second),
			Run: &store.RunUpdate{Version: ptr("1.0.0"), GraphHash: ptr("h1.0.0")},
			Steps: []store.StepWrite{
				{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepPending},
				{Key: "b", Step: "b", Index: -1, Iteration: -1, Status: store.StepCompleted},
				{Key: "c", Step: "c", Index: -1, Iteration: -1, Status: store.StepCompleted},
			}})
		eq(t, "a row written again counts again", counts(), map[string][2]int{"m": {1, 0}, "back": {4, 2}})
	})
}
