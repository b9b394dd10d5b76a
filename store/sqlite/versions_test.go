package sqlite_test

import (
	"bytes"
	"fmt"
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
