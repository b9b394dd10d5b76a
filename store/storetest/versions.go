package storetest

import (
	"encoding/json"
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

	parallel(t, "source", newStore, func(t *testing.T, f *fixture) {
		_, err := put(f, "deploy", 1, 0, 0, "aaa")
		noErr(t, "VersionPut without a source", err)
		_, _, err = f.s.VersionSource(f.ctx, "deploy", "aaa")
		isErr(t, "VersionSource of a graph stored without one", err, store.ErrNotFound)
		src := []byte("workflow \"deploy\" {\n  version = \"1.0.0\"\n}\n\x00\xff")
		_, err = f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "deploy", Version: "1.0.0", Major: 1,
			Hash: "aaa", Graph: []byte(`{"graph":"aaa"}`), Now: at(time.Second), Source: src, SourceName: "deploy.hcl"})
		noErr(t, "VersionPut again, with a source", err)
		name, got, err := f.s.VersionSource(f.ctx, "deploy", "aaa")
		noErr(t, "VersionSource", err)
		eq(t, "source name", name, "deploy.hcl")
		bytesEq(t, "source, byte for byte", got, src)
		_, err = f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "deploy", Version: "1.1.0", Major: 1, Minor: 1,
			Hash: "bbb", Graph: []byte(`{"graph":"bbb"}`), Now: at(2 * time.Second), Source: []byte("new"), SourceName: "other.hcl"})
		noErr(t, "VersionPut of a new version with a source", err)
		name, got, err = f.s.VersionSource(f.ctx, "deploy", "bbb")
		noErr(t, "VersionSource of the new version", err)
		eq(t, "new source", name+" "+string(got), "other.hcl new")
		_, _, err = f.s.VersionSource(f.ctx, "other", "aaa")
		isErr(t, "VersionSource of another workflow", err, store.ErrNotFound)
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

	parallel(t, "signal types", newStore, func(t *testing.T, f *fixture) {
		typed := func(wf, version string, minor int, hash, types string, replace bool) (store.Version, error) {
			var raw json.RawMessage
			if types != "" {
				raw = json.RawMessage(types)
			}
			return f.s.VersionPut(f.ctx, store.VersionPutParams{
				Workflow: wf, Version: version, Minor: minor, Hash: hash, Graph: []byte(`{"graph":"` + hash + `"}`),
				Steps: 1, SignalTypes: raw, Now: at(0), Replace: replace,
			})
		}
		get := func(wf, hash string) json.RawMessage {
			t.Helper()
			raw, err := f.s.VersionSignalTypes(f.ctx, wf, hash)
			noErr(t, "VersionSignalTypes", err)
			return raw
		}
		const a = `{"approve":[{"step":"wait","type":{"kind":"bool"}}]}`
		// Written and read back as the caller's bytes.
		_, err := typed("wf", "1.0.0", 0, "t1", a, false)
		noErr(t, "VersionPut with signal types", err)
		bytesEq(t, "signal types read back", get("wf", "t1"), []byte(a))
		_, err = typed("wf", "1.1.0", 1, "t2", `{}`, false)
		noErr(t, "VersionPut with no typed wait", err)
		bytesEq(t, "no typed wait", get("wf", "t2"), []byte(`{}`))

		// Stored without them: nil (unknown), until the same graph is
		// stored again with them; a later put without them keeps them.
		_, err = typed("wf", "2.0.0", 0, "t3", "", false)
		noErr(t, "VersionPut without signal types", err)
		if raw := get("wf", "t3"); raw != nil {
			t.Errorf("signal types of a version stored without them = %s, want nil", raw)
		}
		_, err = typed("wf", "2.0.0", 0, "t3", a, false)
		noErr(t, "the same graph again with signal types", err)
		bytesEq(t, "filled in by a second put", get("wf", "t3"), []byte(a))
		_, err = typed("wf", "2.0.0", 0, "t3", "", false)
		noErr(t, "the same graph again without signal types", err)
		bytesEq(t, "kept by a put without them", get("wf", "t3"), []byte(a))

		// A replaced revision keeps its own; the new one has the new ones.
		_, err = typed("wf", "0.1.0", 1, "r1", a, true)
		noErr(t, "first revision", err)
		v, err := typed("wf", "0.1.0", 1, "r2", `{"go":[{"step":"w","type":{"kind":"string"}}]}`, true)
		noErr(t, "replacing", err)
		eq(t, "replaced revision", v.Revision, 2)
		bytesEq(t, "replaced revision's signal types", get("wf", "r1"), []byte(a))
		bytesEq(t, "current revision's signal types", get("wf", "r2"), []byte(`{"go":[{"step":"w","type":{"kind":"string"}}]}`))
		_, err = typed("wf", "0.1.0", 1, "r3", "", true)
		noErr(t, "replacing without signal types", err)
		if raw := get("wf", "r3"); raw != nil {
			t.Errorf("signal types of a revision stored without them = %s, want nil", raw)
		}
		bytesEq(t, "second replaced revision's signal types", get("wf", "r2"), []byte(`{"go":[{"step":"w","type":{"kind":"string"}}]}`))

		_, err = f.s.VersionSignalTypes(f.ctx, "wf", "nope")
		isErr(t, "VersionSignalTypes of a missing hash", err, store.ErrNotFound)
		_, err = f.s.VersionSignalTypes(f.ctx, "other", "t1")
		isErr(t, "VersionSignalTypes of another workflow", err, store.ErrNotFound)
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
