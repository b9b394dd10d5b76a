package sqlite_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// TestVersionGraphsKept: graphs read without database/sql's copy (blobCol)
// keep their own bytes when rows are scanned one after another, whatever
// their size (inline and on overflow pages), and heads carry none.
func TestVersionGraphsKept(t *testing.T) {
	s := openTemp(t, sqlite.Options{})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := map[string][]byte{}
	for i, size := range []int{40, 300 << 10, 2 << 20, 100} {
		v := fmt.Sprintf("1.%d.0", i)
		g := []byte(`{"v":"` + strings.Repeat(string(rune('a'+i)), size) + `"}`)
		want[v] = g
		if _, err := s.VersionPut(ctx, store.VersionPutParams{Workflow: "wf", Version: v, Major: 1, Minor: i,
			Hash: fmt.Sprintf("h%d", i), Graph: g, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := s.VersionList(ctx, "wf")
	if err != nil || len(vs) != len(want) {
		t.Fatalf("VersionList: %d versions, %v", len(vs), err)
	}
	for _, v := range vs {
		if !bytes.Equal(v.Graph, want[v.Version]) {
			t.Errorf("version %s: graph of %d bytes does not hold what was stored (%d bytes)", v.Version, len(v.Graph), len(want[v.Version]))
		}
		got, err := s.VersionGetByHash(ctx, "wf", v.Hash)
		if err != nil || !bytes.Equal(got.Graph, want[v.Version]) {
			t.Errorf("VersionGetByHash %s: %d bytes, %v", v.Hash, len(got.Graph), err)
		}
	}
	heads, err := s.VersionHeads(ctx, "wf")
	if err != nil || len(heads) != len(want) {
		t.Fatalf("VersionHeads: %d, %v", len(heads), err)
	}
	for _, h := range heads {
		if h.Graph != nil {
			t.Errorf("head %s carries a graph of %d bytes", h.Version, len(h.Graph))
		}
	}
}

// TestVersionPutWritesGraphOnce: storing a new version with a work
// directory writes its graph to the database once (the write-ahead log
// grows by about the graph's size), and returns the version as VersionGet
// reads it. Recording the directory by an UPDATE after the INSERT rewrote
// the whole row, graph included.
func TestVersionPutWritesGraphOnce(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "flowrun.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	walSize := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "flowrun.db-wal"))
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	const size = 2 << 20
	g := []byte(`{"v":"` + strings.Repeat("g", size) + `"}`)
	now := time.Date(2026, 1, 1, 0, 0, 0, 1234567, time.UTC)
	before := walSize()
	v, err := s.VersionPut(ctx, store.VersionPutParams{Workflow: "wf", Version: "1.0.0", Major: 1, Hash: "h", Graph: g,
		Steps: 3, Now: now, WorkDir: "/work/dir"})
	if err != nil {
		t.Fatal(err)
	}
	if grew := walSize() - before; grew > size*5/4 {
		t.Errorf("storing a graph of %d bytes grew the log by %d bytes: the graph was written more than once", size, grew)
	}
	got, err := s.VersionGet(ctx, "wf", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, got) {
		t.Errorf("VersionPut returned %+v (%d graph bytes), VersionGet reads %+v (%d graph bytes)", v.CreatedAt, len(v.Graph), got.CreatedAt, len(got.Graph))
		v.Graph, got.Graph = nil, nil
		t.Errorf("without graphs: %+v vs %+v", v, got)
	}
	if d, err := s.VersionWorkDir(ctx, "wf", "1.0.0"); err != nil || d != "/work/dir" {
		t.Errorf("VersionWorkDir: %q, %v", d, err)
	}
	// Storing it again keeps it, and a new directory is recorded.
	if _, err := s.VersionPut(ctx, store.VersionPutParams{Workflow: "wf", Version: "1.0.0", Major: 1, Hash: "h", Graph: g,
		Steps: 3, Now: now.Add(time.Hour), WorkDir: "/other"}); err != nil {
		t.Fatal(err)
	}
	if d, err := s.VersionWorkDir(ctx, "wf", "1.0.0"); err != nil || d != "/other" {
		t.Errorf("VersionWorkDir after storing again from another directory: %q, %v", d, err)
	}
	if again, err := s.VersionGet(ctx, "wf", "1.0.0"); err != nil || !again.CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("storing the version again changed it: %v, %v", again.CreatedAt, err)
	}
}
