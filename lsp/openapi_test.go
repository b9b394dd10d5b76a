package lsp

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The operation of an openapi block completes with the operationIds of
// its document, and the block's attributes complete inside it.
func TestCompletionOpenAPI(t *testing.T) {
	dir := t.TempDir()
	doc, err := os.ReadFile(filepath.Join("..", "lang", "testdata", "openapi", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "petstore.yaml"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	text := `workflow "w" {
  version = "1.0.0"
  step "show" {
    openapi {
      document   = "petstore.yaml"
      operation  = "showPetById"
      parameters = { petId = 1 }
      
    }
  }
}
`
	uri := "file://" + filepath.ToSlash(filepath.Join(dir, "w.hcl"))
	s := newTestServer(t, io.Discard)
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "hcl", "version": 1, "text": text}}})
	mustHandle(t, s, open)
	d := s.docs[uri]
	if d == nil || d.mod == nil || len(d.diags) != 0 {
		t.Fatalf("the document does not compile: %v", d.diags)
	}
	if got := labels(s.complete(d, offsetOf(t, text, `"showPetById"`, 1))); got != "createPets listPets showPetById" {
		t.Errorf("operations at the string's start: %q", got)
	}
	if got := labels(s.complete(d, offsetOf(t, text, `"showPetById"`, 3))); got != "showPetById" {
		t.Errorf("operations after \"sh\": %q", got)
	}
	got := " " + labels(s.complete(d, offsetOf(t, text, "      \n    }", 6))) + " "
	for _, w := range []string{"server", "body", "headers", "expect"} {
		if !strings.Contains(got, " "+w+" ") {
			t.Errorf("%q missing from the openapi block's names %q", w, got)
		}
	}
}

// An openapi block whose document is a URL completes its operation with
// the operationIds of the document the server's fetcher gives; the server
// fetches nothing itself.
func TestCompletionOpenAPIURL(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "lang", "testdata", "openapi", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const docURL = "https://api.test/petstore.yaml"
	var fetched []string
	text := `workflow "w" {
  version = "1.0.0"
  step "show" {
    openapi {
      document   = "` + docURL + `"
      operation  = "showPetById"
      parameters = { petId = 1 }
    }
  }
}
`
	uri := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "w.hcl"))
	s := newTestServer(t, io.Discard)
	s.opts.FetchDocument = func(url string, limit int64) ([]byte, error) {
		fetched = append(fetched, url)
		return doc, nil
	}
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "hcl", "version": 1, "text": text}}})
	mustHandle(t, s, open)
	d := s.docs[uri]
	if d == nil || d.mod == nil || len(d.diags) != 0 {
		t.Fatalf("the document does not compile: %v", d.diags)
	}
	if got := labels(s.complete(d, offsetOf(t, text, `"showPetById"`, 3))); got != "showPetById" {
		t.Errorf("operations after \"sh\": %q", got)
	}
	if len(fetched) == 0 || fetched[0] != docURL {
		t.Errorf("fetched %v, want %s", fetched, docURL)
	}
}
