package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/flowrun/flowrun/spec"
	"github.com/flowrun/flowrun/store"
)

// The OpenAPI document, loaded and validated once for every test.
var loadDoc = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

var loadRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := loadDoc()
	if err != nil {
		return nil, err
	}
	// Route by path alone: the test servers listen elsewhere than the
	// document's server.
	local := *doc
	local.Servers = nil
	return legacy.NewRouter(&local)
})

func init() {
	// An event stream is checked as text: its events are checked by the
	// SSE tests against the Event schema.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
}

func doc(t *testing.T) *openapi3.T {
	t.Helper()
	d, err := loadDoc()
	if err != nil {
		t.Fatalf("spec/openapi.yaml: %v", err)
	}
	return d
}

// checkAnswer validates an answer of the API test suite against
// spec/openapi.yaml: the answer of a documented route must be one the
// document allows (status, content type, body schema, headers); any other
// (an unknown route, a refused path) must be a Problem.
func checkAnswer(t *testing.T, req *http.Request, reqBody []byte, ans answer) {
	t.Helper()
	d := doc(t)
	router, err := loadRouter()
	if err != nil {
		t.Fatal(err)
	}
	probe := req.Clone(context.Background())
	probe.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := router.FindRoute(probe)
	if err != nil {
		if ans.status < 400 {
			t.Fatalf("%s %s answered %d but the OpenAPI document has no such route: %v", req.Method, req.URL, ans.status, err)
		}
		checkProblem(t, d, req, ans)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route},
		Status:                 ans.status,
		Header:                 ans.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(ans.body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s: answer %d does not match spec/openapi.yaml: %v\n%s", req.Method, req.URL, ans.status, err, clipBody(ans.body))
	}
	if ans.status >= 400 {
		checkProblem(t, d, req, ans)
	}
}

// checkProblem checks an error answer against the Problem schema.
func checkProblem(t *testing.T, d *openapi3.T, req *http.Request, ans answer) {
	t.Helper()
	if ct := ans.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s %s: %d with Content-Type %q, want application/problem+json", req.Method, req.URL, ans.status, ct)
	}
	var v any
	if err := json.Unmarshal(ans.body, &v); err != nil {
		t.Fatalf("%s %s: problem body is not JSON: %v", req.Method, req.URL, err)
	}
	if err := d.Components.Schemas["Problem"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("%s %s: problem body does not match the Problem schema: %v\n%s", req.Method, req.URL, err, ans.body)
	}
	if m, _ := v.(map[string]any); m["status"] != float64(ans.status) {
		t.Fatalf("%s %s: problem status %v in a %d answer", req.Method, req.URL, m["status"], ans.status)
	}
}

func clipBody(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// operation is one operation of the OpenAPI document.
type operation struct {
	method, path string
	scope        store.TokenScope // "" for an operation without security
}

func operations(t *testing.T) []operation {
	t.Helper()
	var ops []operation
	for path, item := range doc(t).Paths.Map() {
		for method, op := range item.Operations() {
			o := operation{method: method, path: path}
			if s, ok := op.Extensions["x-scope"].(string); ok {
				o.scope = store.TokenScope(s)
			}
			open := op.Security != nil && len(*op.Security) == 0
			switch {
			case open && o.scope != "":
				t.Errorf("%s %s has security [] and x-scope %s", method, path, o.scope)
			case !open && !o.scope.Valid():
				t.Errorf("%s %s needs a token but names no x-scope (read, write or admin)", method, path)
			}
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

// TestOpenAPIRoutes: the document and the server have the same routes,
// each with the same scope, so no route is served undocumented or open by
// mistake.
func TestOpenAPIRoutes(t *testing.T) {
	a := newAPI(t)
	documented := map[string]store.TokenScope{}
	for _, o := range operations(t) {
		documented[o.method+" "+o.path] = o.scope
	}
	served := map[string]bool{}
	for _, rt := range a.srv.Routes() {
		k := rt.Method + " " + rt.Path
		served[k] = true
		scope, ok := documented[k]
		switch {
		case !ok:
			t.Errorf("route %s is not in spec/openapi.yaml", k)
		case scope != rt.Scope:
			t.Errorf("route %s needs scope %q; spec/openapi.yaml says %q", k, rt.Scope, scope)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("spec/openapi.yaml documents %s, which the server does not serve", k)
		}
	}
}

// TestRouteAuth: every route of the document, without a token (401), with
// a token of too small a scope (403) and with the scope it needs (neither).
func TestRouteAuth(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	lower := map[store.TokenScope]store.TokenScope{store.ScopeWrite: store.ScopeRead, store.ScopeDeploy: store.ScopeWrite, store.ScopeAdmin: store.ScopeDeploy}
	for _, o := range operations(t) {
		path := strings.NewReplacer("{workflow}", "hello", "{id}", "nope", "{name}", "go").Replace(o.path)
		body := ""
		if o.method == http.MethodPost {
			body = "{}"
		}
		t.Run(o.method+" "+o.path, func(t *testing.T) {
			a := a.on(t)
			if o.scope == "" {
				if r := a.do("", o.method, path, body); r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
					t.Fatalf("an open route answered %d without a token", r.status)
				}
				return
			}
			a.do("", o.method, path, body).problem(t, http.StatusUnauthorized, "no token")
			if low, ok := lower[o.scope]; ok {
				a.do(low, o.method, path, body).problem(t, http.StatusForbidden, "needs scope "+string(o.scope))
			}
			if r := a.do(o.scope, o.method, path, body); r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
				t.Fatalf("a token of scope %s was refused: %d %s", o.scope, r.status, r.body)
			}
		})
	}
	if runs, _ := a.st.RunList(a.ctx, store.RunListParams{}); len(runs) > 1 {
		t.Fatalf("refused requests wrote runs: %d", len(runs))
	}
}

// TestOpenAPIServed: /v1/openapi.json is the document, as JSON.
func TestOpenAPIServed(t *testing.T) {
	a := newAPI(t)
	r := a.do("", http.MethodGet, "/v1/openapi.json", "").want(t, http.StatusOK).json(t)
	if r["openapi"] != "3.1.0" || r["paths"] == nil {
		t.Fatalf("/v1/openapi.json = %.200v", r)
	}
	got, err := openapi3.NewLoader().LoadFromData(a.do("", http.MethodGet, "/v1/openapi.json", "").body)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Paths.Map()) != len(doc(t).Paths.Map()) {
		t.Fatalf("served document has %d paths, spec/openapi.yaml %d", len(got.Paths.Map()), len(doc(t).Paths.Map()))
	}
}

// TestUnsupportedMediaType: every /v1 operation that takes a body lists
// 415 among its answers in spec/openapi.yaml, and answers it to a body
// sent as curl -d sends one (application/x-www-form-urlencoded), the
// mistake of a client that forgets its Content-Type; the same body as
// application/json is not refused for its type.
func TestUnsupportedMediaType(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	d := doc(t)
	n := 0
	for _, o := range operations(t) {
		if !strings.HasPrefix(o.path, "/v1/") || o.method == http.MethodGet {
			continue
		}
		n++
		t.Run(o.method+" "+o.path, func(t *testing.T) {
			a := a.on(t)
			if d.Paths.Find(o.path).GetOperation(o.method).Responses.Status(http.StatusUnsupportedMediaType) == nil {
				t.Errorf("spec/openapi.yaml lists no 415 answer for %s %s", o.method, o.path)
			}
			path := strings.NewReplacer("{workflow}", "hello", "{id}", "nope", "{name}", "go").Replace(o.path)
			for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", ""} {
				req, err := http.NewRequestWithContext(a.ctx, o.method, a.hs.URL+path, strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				req.Header.Set("Authorization", "Bearer "+a.tokens[o.scope])
				a.send(req).problem(t, http.StatusUnsupportedMediaType, "Content-Type: application/json")
			}
			if r := a.do(o.scope, o.method, path, `{}`); r.status == http.StatusUnsupportedMediaType {
				t.Fatalf("a JSON body was refused for its type: %s", r.body)
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d operations take a body; the filter missed them", n)
	}
}
