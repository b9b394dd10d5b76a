package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// The server must answer any input without crashing: a message body that
// is any bytes, a stream that is any bytes, and a document that is any
// text, with every request at every kind of position. A panic fails the
// fuzz target even though call recovers one: the handlers must not rely
// on that.

// newTestServer is an initialized server writing to out.
func newTestServer(t testing.TB, out io.Writer) *server {
	s := &server{opts: Options{MaxMessage: DefaultMaxMessage, MaxFileSize: 4 << 20}, out: out, docs: map[string]*document{}}
	if _, err := s.initialize(); err != nil {
		t.Fatal(err)
	}
	return s
}

// mustHandle runs one message body through the server, then compiles
// what it made stale (as Serve does when no other message waits), with
// the panic
// guard of call turned into a test failure, and returns the messages the
// server wrote (each checked by frames).
func mustHandle(t testing.TB, s *server, body []byte) []message {
	t.Helper()
	var out bytes.Buffer
	s.out = &out
	if _, err := s.handle(context.Background(), body); err != nil {
		t.Fatalf("handle(%q): %v", body, err)
	}
	if err := s.flush(context.Background()); err != nil { // as Serve does when no message waits
		t.Fatalf("flush after %q: %v", body, err)
	}
	if bytes.Contains(out.Bytes(), []byte(`"code":-32603`)) {
		t.Fatalf("a handler panicked on %q:\n%s", body, out.Bytes())
	}
	return frames(t, out.Bytes())
}

// frames reads what the server wrote as LSP messages: each one framed
// with its exact Content-Length, a UTF-8 JSON-RPC 2.0 object (the
// protocol's content is UTF-8: a client decoding it as such must see the
// same id), and a response has a result or an error, not both.
func frames(t testing.TB, out []byte) []message {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(out))
	var msgs []message
	for {
		body, err := readMessage(r, int64(len(out)))
		if err == io.EOF {
			return msgs
		}
		if err != nil {
			t.Fatalf("the server wrote a message that is not framed: %v\n%q", err, out)
		}
		if !utf8.Valid(body) {
			t.Fatalf("the server wrote a message that is not UTF-8: %q", body)
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("the server wrote %q, not a JSON-RPC 2.0 message (%v)", body, err)
		}
		if m.Method == "" && (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("the server wrote a response with neither or both of result and error: %q", body)
		}
		msgs = append(msgs, m)
	}
}

const fuzzURI = "file:///w.hcl"

const fuzzDoc = `workflow "w" {
  version = "1.0.0"
  input "n" { type = number }
  step "a" {
    when = "input.n > 0"
    exec { command = ["echo", "{{ input.n }}"] }
  }
  step "b" {
    set { x = "{{ steps.a.output.stdout }}" }
  }
}
`

func FuzzMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///w.hcl"},"position":{"line":4,"character":12}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"textDocument/completion","params":{"textDocument":{"uri":"file:///w.hcl"},"position":{"line":-1,"character":99999}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///w.hcl","version":2},"contentChanges":[{"range":{"start":{"line":9,"character":0},"end":{"line":0,"character":0}},"text":"x"}]}}`,
		`{"jsonrpc":"2.0","id":{},"method":"shutdown"}`,
		`{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":[]}`,
		`{"id":4}`,
		`not json`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newTestServer(t, io.Discard)
		open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
			"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": fuzzDoc}}})
		mustHandle(t, s, open)
		out := mustHandle(t, s, body)
		// A request with a valid id gets one response, with that id.
		var m message
		if json.Unmarshal(body, &m) == nil && len(m.ID) > 0 && validID(m.ID) && m.Method != "" && m.Method != "exit" {
			var want any
			_ = json.Unmarshal(m.ID, &want)
			n := 0
			for _, r := range out {
				if r.Method != "" {
					continue
				}
				n++
				var got any
				if err := json.Unmarshal(r.ID, &got); err != nil || got != want {
					t.Fatalf("request %q: answered with id %s, want %s", body, r.ID, m.ID)
				}
			}
			if n != 1 {
				t.Fatalf("request %q: %d responses, want 1", body, n)
			}
		}
	})
}

func FuzzStream(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: -1\r\n\r\n"))
	f.Add([]byte("\r\n\r\nContent-Length: 5\r\n\r\n[1,2]Content-Length: 4\r\n\r\nnull"))
	f.Add([]byte("Content-Type: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`
		in := io.MultiReader(bytes.NewReader([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(init), init))), bytes.NewReader(stream))
		var out bytes.Buffer
		_ = Serve(context.Background(), in, &out, Options{MaxMessage: 1 << 10})
		if bytes.Contains(out.Bytes(), []byte(`"code":-32603`)) {
			t.Fatalf("a handler panicked:\n%s", out.Bytes())
		}
		frames(t, out.Bytes())
	})
}

func FuzzDocument(f *testing.F) {
	f.Add(fuzzDoc)
	// The examples, whole, and cut at every tenth of their length (a file
	// being typed).
	examples, err := filepath.Glob("../examples/*.hcl")
	if err != nil || len(examples) == 0 {
		f.Fatalf("no examples to seed from: %v", err)
	}
	for _, name := range examples {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for cut := 1; cut <= 10; cut++ {
			f.Add(string(src[:len(src)*cut/10]))
		}
	}
	f.Add("workflow \"w\" {\n  step \"a\" {\n    when = \"steps.\n")
	f.Add("workflow \"w\" { x = [[[[[[ }")
	f.Add("workflow \"w\" {\n  step \"a\" { set { x = \"{{ steps.\" } }\n}\n")
	f.Add("\xff\xfe")
	f.Add("workflow \"😀\" { version = \"1.0.0\" step \"a\" { when = \"'é' == input.x\" } }")
	f.Fuzz(func(t *testing.T, doc string) {
		s := newTestServer(t, io.Discard)
		open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
			"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": doc}}})
		mustHandle(t, s, open)
		d := s.docs[fuzzURI]
		if d == nil {
			t.Fatal("the document was not opened")
		}
		// A sample of offsets, spread over the document.
		step := 1 + len(d.text.src)/24
		for off := 0; off <= len(d.text.src); off += step {
			p := d.text.position(off)
			for _, method := range []string{"textDocument/hover", "textDocument/completion", "textDocument/definition"} {
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method,
					"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI}, "position": p}})
				mustHandle(t, s, body)
			}
		}
		for _, method := range []string{"textDocument/formatting", "textDocument/documentSymbol"} {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": method,
				"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI}}})
			mustHandle(t, s, body)
		}
		// Formatting is idempotent: the formatted text, formatted again,
		// needs no edit.
		if edits := formatEdits(t, s, doc); len(edits) == 1 {
			if again := formatEdits(t, newTestServer(t, io.Discard), edits[0].NewText); again == nil || len(again) != 0 {
				t.Fatalf("formatting %q gives %q, which formats again with edits %+v", doc, edits[0].NewText, again)
			}
		}
	})
}

// formatEdits opens text in s and returns its formatting edits, nil when
// the formatting request fails (a file that does not parse).
func formatEdits(t *testing.T, s *server, text string) []TextEdit {
	t.Helper()
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": text}}})
	mustHandle(t, s, open)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "textDocument/formatting",
		"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI}}})
	for _, m := range mustHandle(t, s, body) {
		if m.Method == "" && m.Result != nil {
			var edits []TextEdit
			if err := json.Unmarshal(m.Result, &edits); err != nil {
				t.Fatalf("formatting answered %s: %v", m.Result, err)
			}
			return edits
		}
	}
	return nil
}
