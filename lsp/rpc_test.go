package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/interp"
)

// A message over the limit is skipped, not kept, and the next one is read.
func TestReadMessageOverLimit(t *testing.T) {
	stream := "Content-Length: 20\r\n\r\n" + strings.Repeat("x", 20) + "Content-Length: 2\r\n\r\n{}"
	r := bufio.NewReader(strings.NewReader(stream))
	_, err := readMessage(r, 10)
	var big *errTooLarge
	if !errors.As(err, &big) || big.size != 20 || big.limit != 10 {
		t.Fatalf("first message: %v", err)
	}
	body, err := readMessage(r, 10)
	if err != nil || string(body) != "{}" {
		t.Fatalf("second message: %q, %v", body, err)
	}
	if _, err := readMessage(r, 10); !errors.Is(err, io.EOF) {
		t.Fatalf("end of stream: %v", err)
	}
}

func TestReadMessageBadHeaders(t *testing.T) {
	for _, stream := range []string{
		"Content-Length: x\r\n\r\n",
		"Content-Length: -4\r\n\r\n",
		"Content-Type: a\r\n\r\n{}",
		"X: " + strings.Repeat("a", maxHeaderBytes) + "\r\n\r\n",
		"no colon\r\n\r\n",
	} {
		if _, err := readMessage(bufio.NewReader(strings.NewReader(stream)), 100); !errors.Is(err, errHeader) {
			t.Errorf("%.30q: %v, want a header error", stream, err)
		}
	}
}

// Serve answers a skipped message's sender with a log message and goes on.
func TestServeSkipsLargeMessage(t *testing.T) {
	msg := func(s string) string { return "Content-Length: " + itoa(len(s)) + "\r\n\r\n" + s }
	in := msg(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`) +
		msg(`{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null,"padding":"`+strings.Repeat("p", 200)+`"}`) +
		msg(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`) + msg(`{"jsonrpc":"2.0","method":"exit"}`)
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(in), &out, Options{MaxMessage: 100}); err != nil {
		t.Fatalf("Serve: %v\n%s", err, out.String())
	}
	got := out.String()
	if !strings.Contains(got, `"method":"window/logMessage"`) || !strings.Contains(got, "over the limit of 100 bytes") ||
		strings.Contains(got, `"id":2`) || !strings.Contains(got, `"id":3,"result":null`) {
		t.Fatalf("output:\n%s", got)
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// Positions count UTF-16 code units: é is one, 😀 two.
func TestTextPositions(t *testing.T) {
	tx := newText([]byte("aé😀b\nx"))
	for _, tc := range []struct {
		off int
		pos Position
	}{
		{0, Position{0, 0}}, {1, Position{0, 1}}, {3, Position{0, 2}}, {7, Position{0, 4}}, {8, Position{0, 5}}, {9, Position{1, 0}}, {10, Position{1, 1}},
	} {
		if got := tx.position(tc.off); got != tc.pos {
			t.Errorf("position(%d) = %+v, want %+v", tc.off, got, tc.pos)
		}
		if got := tx.offset(tc.pos); got != tc.off {
			t.Errorf("offset(%+v) = %d, want %d", tc.pos, got, tc.off)
		}
	}
	// Clamped: past the line's end, past the last line, inside a pair.
	if got := tx.offset(Position{0, 99}); got != 8 {
		t.Errorf("past the line's end: %d", got)
	}
	if got := tx.offset(Position{5, 0}); got != 10 {
		t.Errorf("past the last line: %d", got)
	}
	if got := tx.offset(Position{0, 3}); got != 3 {
		t.Errorf("inside a surrogate pair: %d", got)
	}
}

// A document over the size limit gets one diagnostic, and requests on it
// are answered without reading it.
func TestDocumentTooLarge(t *testing.T) {
	var out bytes.Buffer
	s := newTestServer(t, &out)
	s.opts.MaxFileSize = 64
	doc := `workflow "w" {` + strings.Repeat("\n", 100) + "}\n"
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": doc}}})
	mustHandle(t, s, open)
	d := s.docs[fuzzURI]
	if len(d.diags) != 1 || d.diags[0].Summary != "File too large" || d.body != nil {
		t.Fatalf("diagnostics: %v", d.diags)
	}
	if h := s.hover(context.Background(), d, 3); h != nil {
		t.Fatalf("hover on a file over the limit: %+v", h)
	}
	if l := s.complete(d, 3); len(l.Items) != 0 {
		t.Fatalf("completion on a file over the limit: %+v", l)
	}
	if _, err := format(d); err == nil || !strings.Contains(err.Error(), "size limit") {
		t.Fatalf("formatting a file over the limit: %v", err)
	}
}

// A database that fails to open is tried once, not on every change, until
// a document is saved; its failure is a warning on each document.
func TestStoreFailureNotRetriedUntilSave(t *testing.T) {
	s := newTestServer(t, io.Discard)
	opens := 0
	s.opts.Engine = func(context.Context) (*interp.Engine, error) {
		opens++
		return nil, errors.New("connection refused")
	}
	s.opts.Database = "postgres://db/x"
	send := func(method string, params any) {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		mustHandle(t, s, body)
	}
	send("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": fuzzDoc}})
	for v := 2; v < 5; v++ {
		send("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "version": v}, "contentChanges": []map[string]any{{"text": fuzzDoc}}})
	}
	if opens != 1 {
		t.Fatalf("the database was opened %d times over four compiles, want once", opens)
	}
	d := s.docs[fuzzURI]
	if len(d.diags) != 1 || d.diags[0].Summary != "Cannot read the database" || !strings.Contains(d.diags[0].Detail, "postgres://db/x") {
		t.Fatalf("diagnostics: %v", d.diags)
	}
	send("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": fuzzURI}})
	send("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "version": 9}, "contentChanges": []map[string]any{{"text": fuzzDoc}}})
	if opens != 2 {
		t.Fatalf("after a save the database was opened %d times in all, want 2", opens)
	}
}

// A notification that fails (a change to a document that is not open) has
// no answer; the failure goes to the client's log.
func TestNotificationErrorLogged(t *testing.T) {
	var out bytes.Buffer
	s := newTestServer(t, &out)
	body := []byte(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///nope.hcl","version":2},"contentChanges":[{"text":"x"}]}}`)
	if _, err := s.handle(context.Background(), body); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `"method":"window/logMessage"`) || !strings.Contains(got, "file:///nope.hcl is not open") || strings.Contains(got, `"id"`) {
		t.Fatalf("output: %s", got)
	}
}
