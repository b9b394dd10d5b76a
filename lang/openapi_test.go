package lang

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// openapiDir is a directory with the petstore document and the workflow
// file src, which it returns the path of.
func openapiDir(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	doc, err := os.ReadFile(filepath.Join("testdata", "openapi", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "petstore.yaml"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(dir, "wf.hcl")
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return wf
}

func openapiStep(t *testing.T, body string) (*graph.Graph, hcl.Diagnostics) {
	t.Helper()
	wf := openapiDir(t, `workflow "w" {
  version = "1.0.0"
  input "id" { type = number }
  input "name" { type = string }
`+body+`
}
`)
	m, diags := LoadPaths([]string{wf})
	if len(m.Workflows) == 0 {
		return nil, diags
	}
	return m.Workflows[0].Graph, diags
}

func TestOpenAPICompilesToHTTP(t *testing.T) {
	g, diags := openapiStep(t, `
  step "show" {
    openapi {
      document   = "petstore.yaml"
      operation  = "showPetById"
      parameters = { petId = "{{ input.id }}" }
      headers    = { X-Trace = "t" }
    }
  }
  step "list" {
    openapi {
      document   = "./petstore.yaml"
      operation  = "listPets"
      server     = "http://127.0.0.1:9/api/"
      parameters = { limit = 3, status = "{{ input.name }}" }
    }
  }
  step "create" {
    openapi {
      document   = "petstore.yaml"
      operation  = "createPets"
      parameters = { X-Request-Id = "r1" }
      body       = { id = 1, name = "{{ steps.show.output.body.name }}" }
    }
  }`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	show := stepOf(t, g, "show").Action.HTTP
	if stepOf(t, g, "show").Action.Kind != graph.KindHTTP || show.Method != "GET" {
		t.Fatalf("show: %+v", stepOf(t, g, "show").Action)
	}
	url, _ := json.Marshal(show.URL.Template)
	if string(url) != `{"parts":[{"text":"http://petstore.swagger.io/v1/pets/"},{"expr":{"cel":"input.id","type":{"kind":"number"}}}]}` {
		t.Errorf("show url: %s", url)
	}
	if string(show.Headers.Lit) != `{"X-Trace":"t"}` {
		t.Errorf("show headers: %s", show.Headers.Lit)
	}
	if show.OpenAPI == nil || show.OpenAPI.Operation != "showPetById" || show.OpenAPI.Document != "petstore.yaml" || len(show.OpenAPI.SHA256) != 64 {
		t.Errorf("show openapi: %+v", show.OpenAPI)
	}
	want := "object({body = object({id = int, name = string, status = string, tag = string}), headers = map(string), status = int})"
	if got := stepOf(t, g, "show").OutputType.String(); got != want {
		t.Errorf("show output type:\n got %s\nwant %s", got, want)
	}
	list := stepOf(t, g, "list").Action.HTTP
	if string(list.URL.Lit) != `"http://127.0.0.1:9/api/pets"` || list.Query.Object["limit"] == nil || list.Query.Object["status"].Template == nil {
		t.Errorf("list: url %s query %+v", list.URL.Lit, list.Query)
	}
	if got := stepOf(t, g, "list").OutputType.Fields["body"].String(); got != "list(object({id = int, name = string, status = string, tag = string}))" {
		t.Errorf("list body type: %s", got)
	}
	create := stepOf(t, g, "create").Action.HTTP
	if create.Method != "POST" || create.Headers.Lit == nil || !strings.Contains(string(create.Headers.Lit), `"X-Request-Id":"r1"`) || create.Body.Object["name"] == nil {
		t.Errorf("create: %+v", create)
	}
	if !strings.Contains(strings.Join(stepOf(t, g, "create").Needs, ","), "show") {
		t.Errorf("create does not wait for show: %v", stepOf(t, g, "create").Needs)
	}
}

func TestOpenAPIErrors(t *testing.T) {
	for _, tc := range []struct{ name, step, want string }{
		{"unknown parameter", `parameters = { petid = 1 }`, `Operation "showPetById" has no parameter named "petid". Did you mean "petId"?`},
		{"missing parameter", ``, `needs parameter "petId" (in path)`},
		{"literal type", `parameters = { petId = "x" }`, `parameter petId must be an integer`},
		{"fractional integer", `parameters = { petId = 1.5 }`, `parameter petId must be an integer`},
		{"template type", `parameters = { petId = "{{ input.name }}" }`, `parameter petId must be an integer (the document's schema), but this value is a string`},
		{"body on get", `parameters = { petId = 1 }
      body = { a = 1 }`, `takes no request body`},
		{"list parameters", `parameters = "{{ input }}"`, `parameters names each parameter`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := openapiStep(t, `
  step "show" {
    openapi {
      document  = "petstore.yaml"
      operation = "showPetById"
      `+tc.step+`
    }
  }`)
			if !strings.Contains(diagText(diags), tc.want) {
				t.Fatalf("want %q in:\n%v", tc.want, diags)
			}
		})
	}
	for _, tc := range []struct{ name, block, want string }{
		{"missing body", `operation = "createPets"
      parameters = { X-Request-Id = "r" }`, `needs a request body`},
		{"body enum", `operation = "createPets"
      parameters = { X-Request-Id = "r" }
      body = { id = 1, name = "a", status = "gone" }`, `body.status must be one of "available", "pending", "sold"`},
		{"body required", `operation = "createPets"
      parameters = { X-Request-Id = "r" }
      body = { id = 1 }`, `body needs the field "name"`},
		{"body template type", `operation = "createPets"
      parameters = { X-Request-Id = "r" }
      body = { id = "{{ input.name }}", name = "a" }`, `body.id must be an integer`},
		{"server relative", `operation = "listPets"
      server = "/v2"`, `Invalid url`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := openapiStep(t, `
  step "s" {
    openapi {
      document  = "petstore.yaml"
      `+tc.block+`
    }
  }`)
			if !strings.Contains(diagText(diags), tc.want) {
				t.Fatalf("want %q in:\n%v", tc.want, diags)
			}
		})
	}
}

// A path parameter's literal text is escaped as one segment.
func TestOpenAPIPathParts(t *testing.T) {
	c := &compiler{}
	parts := c.pathParts("/files/{name}/raw", map[string]*graph.Value{"name": {Lit: literalJSON("../a b"), Type: graph.TypeString}})
	v := urlValue(append([]graph.TemplatePart{{Text: "http://h"}}, parts...))
	if string(v.Lit) != `"http://h/files/..%2Fa%20b/raw"` {
		t.Fatalf("url %s", v.Lit)
	}
}

func TestOpenAPIDocumentConfined(t *testing.T) {
	outside := t.TempDir()
	big := filepath.Join(outside, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", MaxOpenAPIDocument+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	wf := openapiDir(t, `workflow "w" {
  version = "1.0.0"
  step "a" {
    openapi {
      document  = "link.yaml"
      operation = "listPets"
    }
  }
  step "b" {
    openapi {
      document  = "big.yaml"
      operation = "listPets"
    }
  }
  step "c" {
    openapi {
      document  = "/etc/passwd"
      operation = "listPets"
    }
  }
}
`)
	dir := filepath.Dir(wf)
	if err := os.Symlink(filepath.Join(outside, "big.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip(err)
	}
	if err := os.Rename(big, filepath.Join(dir, "big.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte("x"), 0o644); err != nil { // the link's target, outside
		t.Fatal(err)
	}
	_, diags := LoadPaths([]string{wf})
	for _, want := range []string{"symbolic link that leads out", "OpenAPI document too large", "is an absolute path"} {
		if !strings.Contains(diagText(diags), want) {
			t.Errorf("want %q in:\n%v", want, diags)
		}
	}
}

// Sources that are not this machine's files read no document.
func TestOpenAPINoDocuments(t *testing.T) {
	wf := openapiDir(t, `workflow "w" {
  version = "1.0.0"
  step "a" {
    openapi {
      document  = "petstore.yaml"
      operation = "listPets"
    }
  }
}
`)
	src, _ := os.ReadFile(wf)
	_, diags := LoadSources([]Source{{Name: wf, Src: src}}, LoadOptions{NoDocuments: "not here"})
	if !strings.Contains(diagText(diags), "not here") {
		t.Fatalf("diags: %v", diags)
	}
	if _, diags := LoadSources([]Source{{Name: wf, Src: src}}, LoadOptions{}); diags.HasErrors() {
		t.Fatalf("from disk: %v", diags)
	}
}

// diagText is every diagnostic's summary and detail.
func diagText(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(d.Summary + ": " + d.Detail + "\n")
	}
	return b.String()
}

// A misspelt required parameter is reported once, as unknown with the
// name it meant, not also as missing.
func TestOpenAPIMisspeltParameterOnce(t *testing.T) {
	_, diags := openapiStep(t, `
  step "show" {
    openapi {
      document   = "petstore.yaml"
      operation  = "showPetById"
      parameters = { petid = 1 }
    }
  }`)
	if len(diags) != 1 || diags[0].Summary != "Unknown parameter" {
		t.Fatalf("diags: %s", diagText(diags))
	}
}

// A body of another media type than JSON is sent as text with the
// document's Content-Type, unless the block's headers set one.
func TestOpenAPITextBody(t *testing.T) {
	dir := t.TempDir()
	doc := `openapi: 3.0.3
info: {title: Notes, version: "1"}
servers: [{url: "http://127.0.0.1:1"}]
paths:
  /notes:
    post:
      operationId: addNote
      requestBody:
        content:
          text/markdown:
            schema: {type: string}
      responses:
        "204": {description: Added.}
`
	wf := filepath.Join(dir, "wf.hcl")
	src := `workflow "w" {
  version = "1.0.0"
  step "a" {
    openapi {
      document  = "notes.yaml"
      operation = "addNote"
      body      = "# hello"
    }
  }
  step "b" {
    openapi {
      document  = "notes.yaml"
      operation = "addNote"
      body      = "# hello"
      headers   = { content-type = "text/plain" }
    }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := LoadPaths([]string{wf})
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	g := m.Workflows[0].Graph
	if h := stepOf(t, g, "a").Action.HTTP; string(h.Headers.Lit) != `{"Content-Type":"text/markdown"}` || h.Method != "POST" {
		t.Errorf("a: headers %s", h.Headers.Lit)
	}
	if h := stepOf(t, g, "b").Action.HTTP; string(h.Headers.Lit) != `{"content-type":"text/plain"}` {
		t.Errorf("b: headers %s", h.Headers.Lit)
	}
	if got := stepOf(t, g, "a").OutputType.Fields["body"]; got.Kind != graph.KindAny {
		t.Errorf("a body type %s", got)
	}
}

// A DocumentCache reads a document again only once the file changed.
func TestOpenAPIDocumentCache(t *testing.T) {
	wf := openapiDir(t, "")
	path, bad := resolveDocPath(wf, "petstore.yaml")
	if bad != "" {
		t.Fatal(bad)
	}
	dc := NewDocumentCache()
	a, b := dc.read(path, "petstore.yaml"), dc.read(path, "petstore.yaml")
	if a != b || a.err != "" {
		t.Fatalf("read twice: %p %p (%s)", a, b, a.err)
	}
	if got := OpenAPIOperations(wf, "petstore.yaml", dc, nil); strings.Join(got, " ") != "createPets listPets showPetById" {
		t.Fatalf("operations: %v", got)
	}
	src, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(src, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := dc.read(path, "petstore.yaml"); c == a || c.sha256 == a.sha256 {
		t.Fatal("an edited document was not read again")
	}
}

// An OpenAPI 3.1 document in JSON compiles: a type list with null is any,
// a recursive schema is typed to maxSchemaDepth, a server URL's variables
// take their defaults. An invalid document's diagnostic says where the
// mistake is.
func TestOpenAPIDocument31(t *testing.T) {
	dir := t.TempDir()
	doc := `{"openapi": "3.1.0", "info": {"title": "Tree", "version": "1"},
 "servers": [{"url": "http://127.0.0.1:{port}\/", "variables": {"port": {"default": "1"}}}],
 "paths": {"/nodes/{id}": {"get": {"operationId": "getNode",
   "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
   "responses": {"200": {"description": "A node.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}}},
 "components": {"schemas": {"Node": {"type": "object", "properties": {
   "name": {"type": "string"}, "note": {"type": ["string", "null"]},
   "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}}}}`
	bad := "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      parameters: [{name: a, in: body, schema: {type: string}}]\n      responses: {'200': {description: OK}}\n"
	src := `workflow "w" {
  version = "1.0.0"
  step "a" {
    openapi {
      document   = "tree.json"
      operation  = "getNode"
      parameters = { id = 7 }
    }
  }
}
`
	badSrc := `workflow "w" {
  version = "1.0.0"
  step "b" {
    openapi {
      document  = "bad.yaml"
      operation = "a"
    }
  }
}
`
	for name, body := range map[string]string{"tree.json": doc, "bad.yaml": bad, "wf.hcl": src, "bad.hcl": badSrc} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, diags := LoadPaths([]string{filepath.Join(dir, "bad.hcl")})
	want := `Invalid OpenAPI document: bad.yaml is not a valid OpenAPI 3 document: paths./a.get.parameters[0].in (line 6): a parameter is in path, query, header or cookie, not "body". Fix the document, or use a copy that validates.`
	if len(diags) != 1 || strings.TrimSpace(diagText(diags)) != want {
		t.Fatalf("diagnostics:\n%s\nwant only:\n%s", diagText(diags), want)
	}
	m, diags := LoadPaths([]string{filepath.Join(dir, "wf.hcl")})
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	g := m.Workflows[0].Graph
	h := stepOf(t, g, "a").Action.HTTP
	if string(h.URL.Lit) != `"http://127.0.0.1:1/nodes/7"` {
		t.Errorf("url %s", h.URL.Lit)
	}
	body := stepOf(t, g, "a").OutputType.Fields["body"]
	if body.Kind != graph.KindObject || body.Fields["name"] != graph.TypeString || body.Fields["note"].Kind != graph.KindAny {
		t.Fatalf("body type %s", body)
	}
	depth := 0
	for tp := body; tp != nil && tp.Kind == graph.KindObject; tp = tp.Fields["children"].Elem {
		depth++
	}
	if depth < 5 || depth > maxSchemaDepth {
		t.Errorf("the recursive schema is typed %d objects deep", depth)
	}
}
