package lang

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// fakeFetcher serves documents by URL from a map and counts the fetches
// of each URL; a URL it does not hold answers like a 404.
type fakeFetcher struct {
	docs   map[string][]byte
	errs   map[string]error
	calls  map[string]int
	limits []int64
}

func (f *fakeFetcher) fetch(url string, limit int64) ([]byte, error) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[url]++
	f.limits = append(f.limits, limit)
	if err := f.errs[url]; err != nil {
		return nil, err
	}
	if b, ok := f.docs[url]; ok {
		return b, nil
	}
	return nil, errors.New("the server answered 404 Not Found")
}

func petstoreDoc(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "openapi", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadURLWorkflow compiles src, a workflow file in an empty directory,
// with fetch as the document fetcher.
func loadURLWorkflow(t *testing.T, src string, fetch DocumentFetcher) (*graph.Graph, hcl.Diagnostics) {
	t.Helper()
	wf := filepath.Join(t.TempDir(), "wf.hcl")
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := LoadPathsWith([]string{wf}, LoadOptions{FetchDocument: fetch})
	if len(m.Workflows) == 0 {
		return nil, diags
	}
	return m.Workflows[0].Graph, diags
}

const urlPets = "https://api.test/specs/petstore.yaml"

// A document named by URL is fetched through the load's fetcher, once
// however many steps name it, with the size limit of a file; the graph
// records the URL as written and the SHA-256 of the bytes fetched.
func TestOpenAPIURLDocument(t *testing.T) {
	doc := petstoreDoc(t)
	f := &fakeFetcher{docs: map[string][]byte{urlPets: doc}}
	g, diags := loadURLWorkflow(t, `workflow "w" {
  version = "1.0.0"
  step "list" {
    openapi {
      document   = "`+urlPets+`"
      operation  = "listPets"
      parameters = { limit = 2 }
    }
  }
  step "show" {
    openapi {
      document   = "`+urlPets+`"
      operation  = "showPetById"
      parameters = { petId = 7 }
    }
  }
  output "name" { value = "{{ steps.show.output.body.name }}" }
}
`, f.fetch)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if f.calls[urlPets] != 1 || len(f.calls) != 1 {
		t.Errorf("fetches = %v, want the one URL once", f.calls)
	}
	if f.limits[0] != MaxOpenAPIDocument {
		t.Errorf("limit = %d, want %d", f.limits[0], MaxOpenAPIDocument)
	}
	sum := sha256.Sum256(doc)
	show := stepOf(t, g, "show").Action.HTTP
	want := graph.OpenAPIRef{Document: urlPets, SHA256: hex.EncodeToString(sum[:]), Operation: "showPetById"}
	if show.OpenAPI == nil || *show.OpenAPI != want {
		t.Errorf("openapi = %+v, want %+v", show.OpenAPI, want)
	}
	if show.Method != "GET" || string(show.URL.Lit) != `"http://petstore.swagger.io/v1/pets/7"` {
		t.Errorf("request = %s %s", show.Method, show.URL.Lit)
	}
}

// A fetched document's relative server URL is resolved against the URL it
// was served at, and one without servers calls its host's root, as
// OpenAPI says; a local file's relative server stays an error.
func TestOpenAPIURLRelativeServer(t *testing.T) {
	doc := strings.Replace(string(petstoreDoc(t)), "http://petstore.swagger.io/v1", "/api/v3", 1)
	noServers := strings.Replace(string(petstoreDoc(t)), "servers:\n  - url: http://petstore.swagger.io/v1\n", "", 1)
	if noServers == string(petstoreDoc(t)) {
		t.Fatal("the petstore's servers were not removed")
	}
	f := &fakeFetcher{docs: map[string][]byte{urlPets: []byte(doc), "http://api.test:8080/docs/none.yaml": []byte(noServers)}}
	g, diags := loadURLWorkflow(t, `workflow "w" {
  version = "1.0.0"
  step "a" {
    openapi {
      document   = "`+urlPets+`"
      operation  = "showPetById"
      parameters = { petId = 7 }
    }
  }
  step "b" {
    openapi {
      document   = "http://api.test:8080/docs/none.yaml"
      operation  = "showPetById"
      parameters = { petId = 8 }
    }
  }
}
`, f.fetch)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if u := string(stepOf(t, g, "a").Action.HTTP.URL.Lit); u != `"https://api.test/api/v3/pets/7"` {
		t.Errorf("a's url = %s", u)
	}
	if u := string(stepOf(t, g, "b").Action.HTTP.URL.Lit); u != `"http://api.test:8080/pets/8"` {
		t.Errorf("b's url = %s", u)
	}
}

// Every way a URL document fails is an error at the document attribute
// that names the URL, says why and how to fix it.
func TestOpenAPIURLErrors(t *testing.T) {
	f := &fakeFetcher{
		docs: map[string][]byte{"https://api.test/broken.yaml": []byte("openapi: 3.0.3\npaths: [1]\n")},
		errs: map[string]error{
			"https://api.test/big.yaml":  &FileTooLargeError{Name: "https://api.test/big.yaml", Limit: MaxOpenAPIDocument},
			"https://api.test/slow.yaml": errors.New("no answer within 10s"),
		},
	}
	step := func(name, doc string) string {
		return `
  step "` + name + `" {
    openapi {
      document  = "` + doc + `"
      operation = "listPets"
    }
  }`
	}
	src := `workflow "w" {
  version = "1.0.0"` +
		step("missing", "https://api.test/missing.yaml") +
		step("big", "https://api.test/big.yaml") +
		step("slow", "https://api.test/slow.yaml") +
		step("broken", "https://api.test/broken.yaml") +
		step("ftp", "ftp://api.test/p.yaml") +
		step("creds", "https://me:hunter2@api.test/p.yaml") +
		step("tmpl", "https://api.test/{{ secrets.path }}.yaml") +
		step("nohost", "http:///p.yaml") + `
}
`
	_, diags := loadURLWorkflow(t, src, f.fetch)
	want := []struct {
		line       int
		summary    string
		detail     []string
		notInclude string
	}{
		{5, "Cannot fetch OpenAPI document", []string{"Fetching https://api.test/missing.yaml failed: the server answered 404 Not Found.", "save a copy of the document beside the workflow file"}, ""},
		{11, "OpenAPI document too large", []string{"https://api.test/big.yaml is larger than 4 MiB"}, ""},
		{17, "Cannot fetch OpenAPI document", []string{"failed: no answer within 10s. Check the URL"}, ""},
		{23, "Invalid OpenAPI document", []string{"https://api.test/broken.yaml is not a valid OpenAPI 3 document"}, ""},
		{29, "Invalid OpenAPI document URL", []string{"is a ftp URL; flowrun fetches OpenAPI documents only over http and https"}, ""},
		{35, "Invalid OpenAPI document URL", []string{"https://me:xxxxx@api.test/p.yaml carries credentials", "must hold no secret"}, "hunter2"},
		{41, "Invalid OpenAPI document URL", []string{"holds a template; document is a literal"}, ""},
		{47, "Invalid OpenAPI document URL", []string{`"http:///p.yaml" has no host`}, ""},
	}
	if len(diags) != len(want) {
		t.Fatalf("%d diagnostics, want %d:\n%s", len(diags), len(want), diagText(diags))
	}
	for i, w := range want {
		d := diags[i]
		if d.Summary != w.summary || d.Subject == nil || d.Subject.Start.Line != w.line || d.Subject.Start.Column != 19 {
			t.Errorf("diagnostic %d = %s at %v, want %s at %d:19", i, d.Summary, d.Subject, w.summary, w.line)
		}
		for _, s := range w.detail {
			if !strings.Contains(d.Detail, s) {
				t.Errorf("diagnostic %d: want %q in %q", i, s, d.Detail)
			}
		}
		if w.notInclude != "" && strings.Contains(d.Detail, w.notInclude) {
			t.Errorf("diagnostic %d shows %q: %s", i, w.notInclude, d.Detail)
		}
	}
	for _, u := range []string{"ftp://api.test/p.yaml", "https://me:hunter2@api.test/p.yaml", "https://api.test/{{ secrets.path }}.yaml", "http:///p.yaml"} {
		if f.calls[u] != 0 {
			t.Errorf("%s was fetched", u)
		}
	}
}

// Without a fetcher (a program that compiles without network access) a
// URL document is an error that says what to do; lang fetches nothing
// itself.
func TestOpenAPIURLNoFetcher(t *testing.T) {
	_, diags := loadURLWorkflow(t, `workflow "w" {
  version = "1.0.0"
  step "a" {
    openapi {
      document  = "`+urlPets+`"
      operation = "listPets"
    }
  }
}
`, nil)
	if len(diags) != 1 || diags[0].Summary != "OpenAPI document not fetched" ||
		!strings.Contains(diags[0].Detail, "compiles workflows without fetching documents") {
		t.Fatalf("diags:\n%s", diagText(diags))
	}
}

// A document that changed at its URL changes the graph's hash, and the
// diff names the document, as a changed file does.
func TestOpenAPIURLChangedDocument(t *testing.T) {
	src := `workflow "w" {
  version = "1.0.0"
  step "show" {
    openapi {
      document   = "` + urlPets + `"
      operation  = "showPetById"
      parameters = { petId = 7 }
    }
  }
}
`
	doc := petstoreDoc(t)
	g1, diags := loadURLWorkflow(t, src, (&fakeFetcher{docs: map[string][]byte{urlPets: doc}}).fetch)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g2, diags := loadURLWorkflow(t, src, (&fakeFetcher{docs: map[string][]byte{urlPets: append(doc, "# edited\n"...)}}).fetch)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	h1, err := graph.Hash(g1)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := graph.Hash(g2)
	if err != nil {
		t.Fatal(err)
	}
	if h1 == h2 {
		t.Fatal("a changed document left the graph's hash as it was")
	}
	changes := graph.Diff(g1, g2)
	if len(changes) != 1 || !strings.HasPrefix(changes[0].What, "openapi document "+urlPets+" changed (sha256 ") || changes[0].Bump != graph.BumpMinor {
		t.Fatalf("changes = %+v", changes)
	}
}

// A DocumentCache validates a fetched document again only when its bytes
// changed.
func TestOpenAPIURLDocumentCache(t *testing.T) {
	doc := petstoreDoc(t)
	f := &fakeFetcher{docs: map[string][]byte{urlPets: doc}}
	dc := NewDocumentCache()
	ops := func() []string { return OpenAPIOperations("wf.hcl", urlPets, dc, f.fetch) }
	if got := strings.Join(ops(), " "); got != "createPets listPets showPetById" {
		t.Fatalf("operations: %v", got)
	}
	a := dc.docs[urlPets].doc
	ops()
	if dc.docs[urlPets].doc != a {
		t.Error("the same bytes were validated again")
	}
	f.docs[urlPets] = []byte(strings.Replace(string(doc), "operationId: listPets", "operationId: listAllPets", 1))
	if got := strings.Join(ops(), " "); got != "createPets listAllPets showPetById" {
		t.Fatalf("operations after the change: %v", got)
	}
	if f.calls[urlPets] != 3 {
		t.Errorf("fetches = %d, want one per call (the fetcher caches, not the DocumentCache)", f.calls[urlPets])
	}
}
