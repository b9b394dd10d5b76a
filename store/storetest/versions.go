package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testVersions(t *testing.T, newStore func(t *testing.T) store.Store) {
	put := func(f *fixture, wf string, maj, min, pat int, hash string) (store.Version, error) {
		return f.s.VersionPut(f.ctx, store.VersionPutParams{
			Workflow: wf, Version: fmt.Sprintf("%d.%d.%d", maj, min, pat), Major: maj, Minor: min, Patch: pat,
			Hash: hash, Graph: []byte(`{"graph":"` + hash + `"}`), Now: at(0),
		})
	}

	parallel(t, "put and get", newStore, func(t *testing.T, f *fixture) {
		v, err := put(f, "deploy", 1, 2, 3, "aaa")
		noErr(t, "VersionPut", err)
		eq(t, "version", v.Version, "1.2.3")
		eq(t, "major.minor.patch", [3]int{v.Major, v.Minor, v.Patch}, [3]int{1, 2, 3})
		timeEq(t, "created", v.CreatedAt, at(0))
		got, err := f.s.VersionGet(f.ctx, "deploy", "1.2.3")
		noErr(t, "VersionGet", err)
		eq(t, "hash", got.Hash, "aaa")
		bytesEq(t, "graph", got.Graph, []byte(`{"graph":"aaa"}`))
		got, err = f.s.VersionGetByHash(f.ctx, "deploy", "aaa")
		noErr(t, "VersionGetByHash", err)
		eq(t, "version by hash", got.Version, "1.2.3")

		_, err = f.s.VersionGet(f.ctx, "deploy", "9.9.9")
		isErr(t, "VersionGet of a missing version", err, store.ErrNotFound)
		_, err = f.s.VersionGet(f.ctx, "other", "1.2.3")
		isErr(t, "VersionGet of another workflow", err, store.ErrNotFound)
		_, err = f.s.VersionGetByHash(f.ctx, "deploy", "zzz")
		isErr(t, "VersionGetByHash of a missing hash", err, store.ErrNotFound)
	})

	parallel(t, "idempotent and conflict", newStore, func(t *testing.T, f *fixture) {
		_, err := put(f, "deploy", 1, 0, 0, "aaa")
		noErr(t, "first VersionPut", err)
		v, err := put(f, "deploy", 1, 0, 0, "aaa")
		noErr(t, "same VersionPut again", err)
		eq(t, "hash", v.Hash, "aaa")
		_, err = put(f, "deploy", 1, 0, 0, "bbb")
		isErr(t, "VersionPut with another hash", err, store.ErrVersionConflict)
		got, err := f.s.VersionGet(f.ctx, "deploy", "1.0.0")
		noErr(t, "VersionGet", err)
		eq(t, "hash after the conflict", got.Hash, "aaa")
	})

	parallel(t, "replace a revision", newStore, func(t *testing.T, f *fixture) {
		replace := func(hash string, now time.Time) (store.Version, error) {
			return f.s.VersionPut(f.ctx, store.VersionPutParams{
				Workflow: "wf", Version: "0.1.0", Minor: 1, Hash: hash, Graph: []byte(`{"graph":"` + hash + `"}`),
				Steps: 2, Now: now, Replace: true,
			})
		}
		v, err := replace("h1", at(0))
		noErr(t, "first VersionPut", err)
		eq(t, "first revision", v.Revision, 1)
		v, err = replace("h1", at(time.Second))
		noErr(t, "the same graph with Replace", err)
		eq(t, "revision of the same graph", v.Revision, 1)

		// A run that finished on revision 1 does not stop a replacement.
		f.finished("r1", "", store.RunCompleted, at(time.Second), 1)
		v, err = replace("h2", at(2*time.Second))
		noErr(t, "replacing", err)
		eq(t, "replaced revision", v.Revision, 2)
		eq(t, "replaced hash", v.Hash, "h2")
		timeEq(t, "replaced at", v.CreatedAt, at(2*time.Second))
		got, err := f.s.VersionGet(f.ctx, "wf", "0.1.0")
		noErr(t, "VersionGet", err)
		eq(t, "current revision", [2]any{got.Revision, got.Hash}, [2]any{2, "h2"})
		bytesEq(t, "current graph", got.Graph, []byte(`{"graph":"h2"}`))
		heads, err := f.s.VersionHeads(f.ctx, "wf")
		noErr(t, "VersionHeads", err)
		eq(t, "heads", len(heads), 1)
		eq(t, "head revision", [2]any{heads[0].Revision, heads[0].Hash}, [2]any{2, "h2"})
		// The replaced graph stays readable by its hash: a run bound to it
		// still has the graph it ran.
		old, err := f.s.VersionGetByHash(f.ctx, "wf", "h1")
		noErr(t, "VersionGetByHash of the replaced graph", err)
		eq(t, "replaced version", [3]any{old.Version, old.Revision, old.Hash}, [3]any{"0.1.0", 1, "h1"})
		bytesEq(t, "replaced graph", old.Graph, []byte(`{"graph":"h1"}`))
		timeEq(t, "replaced revision's time", old.CreatedAt, at(0))
		cur, err := f.s.VersionGetByHash(f.ctx, "wf", "h2")
		noErr(t, "VersionGetByHash of the current graph", err)
		eq(t, "current by hash", cur.Revision, 2)

		// Without Replace another graph is still a conflict.
		_, err = f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "wf", Version: "0.1.0", Minor: 1, Hash: "h3", Graph: []byte(`{}`), Now: at(3 * time.Second)})
		isErr(t, "VersionPut without Replace", err, store.ErrVersionConflict)

		// An unfinished run bound to the version refuses a replacement,
		// naming the oldest such run; nothing is written.
		f.insert(store.RunInsertParams{ID: "r3", Workflow: "wf", Version: "0.1.0", GraphHash: "h2", Events: []store.EventWrite{{Kind: "run_created"}}})
		f.insert(store.RunInsertParams{ID: "r2", Workflow: "wf", Version: "0.1.0", GraphHash: "h2", Events: []store.EventWrite{{Kind: "run_created"}}})
		_, err = replace("h3", at(4*time.Second))
		isErr(t, "replacing a version an unfinished run is bound to", err, store.ErrVersionInUse)
		var inUse *store.VersionInUseError
		if !errors.As(err, &inUse) {
			t.Fatalf("replacing a version in use: %v, want a *store.VersionInUseError", err)
		}
		eq(t, "in use", *inUse, store.VersionInUseError{Workflow: "wf", Version: "0.1.0", Run: "r2", Status: store.RunPending, Runs: 2})
		got, err = f.s.VersionGet(f.ctx, "wf", "0.1.0")
		noErr(t, "VersionGet after the refusal", err)
		eq(t, "after the refusal", [2]any{got.Revision, got.Hash}, [2]any{2, "h2"})
		_, err = f.s.VersionGetByHash(f.ctx, "wf", "h3")
		isErr(t, "the refused graph", err, store.ErrNotFound)
	})

	parallel(t, "list by semantic version", newStore, func(t *testing.T, f *fixture) {
		// Inserted out of order; 1.10.0 sorts after 1.9.0 (numbers, not text).
		for _, v := range [][3]int{{1, 10, 0}, {0, 1, 0}, {1, 9, 0}, {1, 9, 10}, {1, 9, 2}, {2, 0, 0}} {
			_, err := put(f, "deploy", v[0], v[1], v[2], fmt.Sprint(v))
			noErr(t, "VersionPut", err)
		}
		_, err := put(f, "build", 3, 0, 0, "b")
		noErr(t, "VersionPut", err)
		vs, err := f.s.VersionList(f.ctx, "deploy")
		noErr(t, "VersionList", err)
		var got []string
		for _, v := range vs {
			got = append(got, v.Version)
		}
		eq(t, "versions", got, []string{"0.1.0", "1.9.0", "1.9.2", "1.9.10", "1.10.0", "2.0.0"})
		all, err := f.s.VersionList(f.ctx, "")
		noErr(t, "VersionList all", err)
		eq(t, "count of all versions", len(all), 7)
		eq(t, "first of all", all[0].Workflow+" "+all[0].Version, "build 3.0.0")
		none, err := f.s.VersionList(f.ctx, "nothing")
		noErr(t, "VersionList of an unknown workflow", err)
		eq(t, "versions of an unknown workflow", len(none), 0)
		// VersionHeads lists the same versions without their graphs.
		for _, wf := range []string{"deploy", "", "nothing"} {
			full, err := f.s.VersionList(f.ctx, wf)
			noErr(t, "VersionList", err)
			heads, err := f.s.VersionHeads(f.ctx, wf)
			noErr(t, "VersionHeads", err)
			eq(t, "count of VersionHeads("+wf+")", len(heads), len(full))
			for i := range min(len(heads), len(full)) {
				if heads[i].Graph != nil {
					t.Errorf("VersionHeads(%q)[%d] has a graph of %d bytes, want none", wf, i, len(heads[i].Graph))
				}
				want := full[i]
				want.Graph = nil
				eq(t, fmt.Sprintf("VersionHeads(%q)[%d]", wf, i), heads[i], want)
			}
		}
	})
}
