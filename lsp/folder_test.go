package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// folderSession is the input of an editor that opens n workflow files of
// one folder in a burst, asks for a hover in the middle one, and ends the
// session; the files are also saved in the folder.
func folderSession(tb testing.TB, n int) (input []byte, dir string) {
	tb.Helper()
	dir = tb.TempDir()
	var in bytes.Buffer
	send := func(id int, method string, params any) {
		raw, err := json.Marshal(params)
		if err != nil {
			tb.Fatal(err)
		}
		m := &message{Method: method, Params: raw}
		if id > 0 {
			m.ID = json.RawMessage(fmt.Sprint(id))
		}
		if err := writeMessage(&in, m); err != nil {
			tb.Fatal(err)
		}
	}
	send(1, "initialize", map[string]any{})
	send(0, "initialized", map[string]any{})
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("w%03d.hcl", i))
		text := fmt.Sprintf("workflow \"w%03d\" {\n  version = \"1.0.0\"\n  input \"n\" { type = number }\n"+
			"  step \"a\" {\n    set { v = \"{{ input.n + %d }}\" }\n  }\n}\n", i, i)
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
		send(0, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": "file://" + name, "languageId": "hcl", "version": 1, "text": text}})
	}
	mid := filepath.Join(dir, fmt.Sprintf("w%03d.hcl", n/2))
	send(2, "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file://" + mid},
		"position": map[string]any{"line": 4, "character": 22}})
	send(3, "shutdown", nil)
	send(0, "exit", nil)
	return in.Bytes(), dir
}

// An editor opening a folder sends a burst of didOpen. Each used to
// compile the folder once for every open document of it, so the work grew
// with the cube of the number of files and a folder of a few hundred
// stopped the server answering. A burst is now compiled once per buffer
// the server reads; every document still gets its diagnostics, and the
// hover is answered from the compiled folder.
func TestFolderBurstCompiledOnce(t *testing.T) {
	const n = 500
	input, _ := folderSession(t, n)
	var out bytes.Buffer
	s := &server{opts: Options{MaxMessage: DefaultMaxMessage, MaxFileSize: 4 << 20}, out: &out, docs: map[string]*document{}}
	if err := s.serve(context.Background(), bytes.NewReader(input)); err != nil {
		t.Fatal(err)
	}
	// The server reads the input in buffers of 64 KiB.
	if limit := len(input)/(64<<10) + 2; s.compiles > limit {
		t.Errorf("%d documents opened in a burst of %d bytes took %d compiles, want at most %d", n, len(input), s.compiles, limit)
	}
	t.Logf("%d compiles for %d bytes", s.compiles, len(input))
	published := map[string]int{}
	var hover string
	for _, m := range frames(t, out.Bytes()) {
		switch {
		case m.Method == "textDocument/publishDiagnostics":
			var p publishDiagnosticsParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			published[p.URI] = len(p.Diagnostics)
		case string(m.ID) == "2":
			hover = string(m.Result)
		}
	}
	if len(published) != n {
		t.Errorf("diagnostics were published for %d documents, want %d", len(published), n)
	}
	for uri, k := range published {
		if k != 0 {
			t.Errorf("%s: %d diagnostics, want none", uri, k)
		}
	}
	if !strings.Contains(hover, "number") {
		t.Errorf("hover on input.n in the middle document: %s", hover)
	}
}

// BenchmarkFolderBurst is an editor session opening a folder of 500
// workflow files and asking for one hover.
func BenchmarkFolderBurst(b *testing.B) {
	input, _ := folderSession(b, 500)
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := Serve(context.Background(), bytes.NewReader(input), &out, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
