package storetest

import (
	"fmt"
	"testing"

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
