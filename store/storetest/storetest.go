// Package storetest is the conformance suite of store.Store: one set of
// tests that every backend (store/sqlite, store/postgres) runs unchanged,
// so that the backends agree on every behaviour the engine relies on.
//
// It owns the executable definition of the store contract beyond the doc
// comments of package store. It must not depend on any backend, and it only
// talks to a store through the store.Store interface.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// Run runs the conformance suite. newStore must return a new, empty store
// each time it is called (the subtests run in parallel, each on its own
// store) and arrange for it to be closed when t ends.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("versions", func(t *testing.T) { t.Parallel(); testVersions(t, newStore) })
	t.Run("runs", func(t *testing.T) { t.Parallel(); testRuns(t, newStore) })
	t.Run("list", func(t *testing.T) { t.Parallel(); testRunList(t, newStore) })
	t.Run("claims", func(t *testing.T) { t.Parallel(); testClaims(t, newStore) })
	t.Run("leases", func(t *testing.T) { t.Parallel(); testLeases(t, newStore) })
	t.Run("transitions", func(t *testing.T) { t.Parallel(); testTransitions(t, newStore) })
	t.Run("decisions", func(t *testing.T) { t.Parallel(); testDecisions(t, newStore) })
	t.Run("item outputs", func(t *testing.T) { t.Parallel(); testItemOutputs(t, newStore) })
	t.Run("item totals", func(t *testing.T) { t.Parallel(); testItemTotals(t, newStore) })
	t.Run("cancel", func(t *testing.T) { t.Parallel(); testCancel(t, newStore) })
	t.Run("signals", func(t *testing.T) { t.Parallel(); testSignals(t, newStore) })
	t.Run("events", func(t *testing.T) { t.Parallel(); testEvents(t, newStore) })
	t.Run("breakers", func(t *testing.T) { t.Parallel(); testBreakers(t, newStore) })
	t.Run("deadletters", func(t *testing.T) { t.Parallel(); testDeadLetters(t, newStore) })
	t.Run("concurrency", func(t *testing.T) { t.Parallel(); testConcurrency(t, newStore) })
	t.Run("alerts", func(t *testing.T) { t.Parallel(); testAlerts(t, newStore) })
	t.Run("prune", func(t *testing.T) { t.Parallel(); testPrune(t, newStore) })
	t.Run("output", func(t *testing.T) { t.Parallel(); testOutput(t, newStore) })
	t.Run("capabilities", func(t *testing.T) { t.Parallel(); testCapabilities(t, newStore) })
	t.Run("schedules", func(t *testing.T) { t.Parallel(); testSchedules(t, newStore) })
	t.Run("schedule overlap", func(t *testing.T) { t.Parallel(); testScheduleOverlap(t, newStore) })
	t.Run("schedule fire batch", func(t *testing.T) { t.Parallel(); testScheduleFireBatch(t, newStore) })
	t.Run("webhooks", func(t *testing.T) { t.Parallel(); testWebhooks(t, newStore) })
	t.Run("tokens", func(t *testing.T) { t.Parallel(); testTokens(t, newStore) })
	t.Run("trace", func(t *testing.T) { t.Parallel(); testTrace(t, newStore) })
	t.Run("workers", func(t *testing.T) { t.Parallel(); testWorkers(t, newStore) })
	t.Run("batch keyed", func(t *testing.T) { t.Parallel(); testBatchKeyed(t, newStore) })
}

// t0 is the suite's epoch: every time is t0 plus something, with
// microsecond precision, as every backend stores it.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// fixture is the setup bundle of one test: a fresh store and helpers.
type fixture struct {
	t   *testing.T
	ctx context.Context
	s   store.Store
}

func setup(t *testing.T, newStore func(t *testing.T) store.Store) *fixture {
	t.Helper()
	return &fixture{t: t, ctx: context.Background(), s: newStore(t)}
}

// parallel runs fn as a parallel subtest on a fresh store.
func parallel(t *testing.T, name string, newStore func(t *testing.T) store.Store, fn func(t *testing.T, f *fixture)) {
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		fn(t, setup(t, newStore))
	})
}

// insert creates a top-level run available at t0 (or as p says).
func (f *fixture) insert(p store.RunInsertParams) store.Run {
	f.t.Helper()
	if p.Workflow == "" {
		p.Workflow = "wf"
	}
	if p.Version == "" {
		p.Version = "1.0.0"
	}
	if p.GraphHash == "" {
		p.GraphHash = "h1"
	}
	if p.Now.IsZero() {
		p.Now = t0
	}
	r, err := f.s.RunInsert(f.ctx, p)
	if err != nil {
		f.t.Fatalf("RunInsert(%s): %v", p.ID, err)
	}
	return r
}

// claimOne claims exactly the run id for owner at now.
func (f *fixture) claimOne(owner, id string, now time.Time) store.Run {
	f.t.Helper()
	rs, err := f.s.RunClaim(f.ctx, store.RunClaimParams{Owner: owner, Now: now, LeaseFor: time.Minute, Limit: 1, RunID: id})
	if err != nil {
		f.t.Fatalf("RunClaim(%s): %v", id, err)
	}
	if len(rs) != 1 || rs[0].ID != id {
		f.t.Fatalf("RunClaim(%s) claimed %v, want the run", id, ids(rs))
	}
	return rs[0]
}

func (f *fixture) get(id string) store.Run {
	f.t.Helper()
	r, err := f.s.RunGet(f.ctx, id)
	if err != nil {
		f.t.Fatalf("RunGet(%s): %v", id, err)
	}
	return r
}

// commit commits one transition and returns its result; a batch error fails
// the test.
func (f *fixture) commit(tr store.Transition) store.TransitionResult {
	f.t.Helper()
	res, err := f.s.TransitionCommit(f.ctx, []store.Transition{tr})
	if err != nil {
		f.t.Fatalf("TransitionCommit(%s): %v", tr.RunID, err)
	}
	if len(res) != 1 || res[0].RunID != tr.RunID {
		f.t.Fatalf("TransitionCommit(%s) results = %+v, want one for the run", tr.RunID, res)
	}
	return res[0]
}

func (f *fixture) steps(runID string) []store.Step {
	f.t.Helper()
	st, err := f.s.StepList(f.ctx, runID)
	if err != nil {
		f.t.Fatalf("StepList(%s): %v", runID, err)
	}
	return st
}

func (f *fixture) attempts(runID, key string) []store.Attempt {
	f.t.Helper()
	as, err := f.s.AttemptList(f.ctx, runID, key)
	if err != nil {
		f.t.Fatalf("AttemptList(%s, %q): %v", runID, key, err)
	}
	return as
}

func (f *fixture) events(runID string) []store.Event {
	f.t.Helper()
	evs, err := f.s.EventList(f.ctx, store.EventListParams{RunID: runID})
	if err != nil {
		f.t.Fatalf("EventList(%s): %v", runID, err)
	}
	return evs
}

func ids(rs []store.Run) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func kinds(evs []store.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// eq fails the test when got and want differ.
func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %#v, want %#v", what, got, want)
	}
}

// timeEq fails the test when two times are not the same instant.
func timeEq(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// jsonEq fails the test when two JSON documents differ (nil == empty).
func jsonEq(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if len(got) == 0 || len(want) == 0 {
		if len(got) != len(want) {
			t.Fatalf("%s = %s, want %s", what, got, want)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s = %s: not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want of %s is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// isErr fails the test unless err wraps target.
func isErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: err = %v, want %v", what, err, target)
	}
}

func noErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("storetest: %v", err))
	}
	return b
}

func bytesEq(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}
