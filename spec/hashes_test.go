package spec

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/rogpeppe/go-internal/txtar"
)

var updateHashes = flag.Bool("update-hashes", false, "rewrite spec/golden/graph_hashes.txt (only when a hash change is intended: it breaks every stored version of that workflow)")

// TestGraphHashesPinned pins the graph hash of every workflow in
// examples/, lang/testdata/valid/ and the conformance cases. A database
// written by an older flowrun refuses a changed graph under the same
// version (versioning §3), so a refactoring of the compiler, the codec or
// the hash, or a new step attribute left unset, must keep every hash here.
// Entries are keyed by file, workflow and version: a file whose workflow
// changed under a bumped version is a new entry (regenerate with
// -update-hashes, and the old version's line goes); a changed hash under
// the same version is a compatibility break, never something to
// regenerate in passing.
func TestGraphHashesPinned(t *testing.T) {
	got := map[string]string{}
	add := func(name string, src []byte) {
		t.Helper()
		// The conformance harness replaces $HTTP with its server's URL;
		// any fixed URL keeps the hash stable.
		src = bytes.ReplaceAll(src, []byte("$HTTP"), []byte("http://127.0.0.1:1"))
		mod, diags := lang.LoadFile(name, src)
		if diags.HasErrors() {
			return // the error cases have no graph to pin
		}
		for _, w := range mod.Workflows {
			h, err := graph.Hash(w.Graph)
			if err != nil {
				t.Fatalf("%s: workflow %q: hash: %v", name, w.Name, err)
			}
			got[name+" "+w.Name+"@"+w.Graph.Version] = h
		}
	}
	for _, pattern := range []string{"../examples/*.hcl", "../lang/testdata/valid/*.hcl"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if lang.IsTestFile(f) {
				continue // tests (spec/testing.md), not workflows
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			add(strings.TrimPrefix(f, "../"), src)
		}
	}
	cases, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		ar, err := txtar.ParseFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".hcl") {
				add("spec/"+c+"/"+f.Name, f.Data)
			}
		}
	}
	if len(got) < 50 {
		t.Fatalf("only %d workflows compiled; the globs or the loader are wrong", len(got))
	}

	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k, got[k])
	}
	const golden = "golden/graph_hashes.txt"
	if *updateHashes {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with go test ./spec -run TestGraphHashesPinned -update-hashes)", err)
	}
	wantHashes := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		wantHashes[line[:i]] = line[i+1:]
	}
	for _, k := range keys {
		w, ok := wantHashes[k]
		switch {
		case !ok:
			t.Errorf("%s: not pinned yet; add it with -update-hashes", k)
		case w != got[k]:
			t.Errorf("%s: graph hash changed\n  pinned %s\n  now    %s\na database that stored this version refuses the file now (versioning §3)", k, w, got[k])
		}
	}
	for k := range wantHashes {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: pinned but no longer compiles or exists; remove it from the golden file only if the file was deleted on purpose", k)
		}
	}
}
