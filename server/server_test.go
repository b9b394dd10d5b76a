package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

const helloHCL = `
workflow "hello" {
  version = "1.0.0"
  input "name" {
    type    = string
    default = "world"
  }
  input "count" {
    type    = number
    default = 1
  }
  step "greeting" {
    set {
      text = "Hello, {{ input.name }}!"
    }
  }
  output "text" { value = "{{ steps.greeting.output.text }}" }
}
`

func TestHealth(t *testing.T) {
	a := newAPI(t)
	if got := a.do("", http.MethodGet, "/healthz", "").want(t, http.StatusOK).json(t); got["status"] != "ok" {
		t.Fatalf("/healthz = %v", got)
	}
	if got := a.do("", http.MethodGet, "/readyz", "").want(t, http.StatusOK).json(t); got["status"] != "ready" {
		t.Fatalf("/readyz = %v", got)
	}
	a.st.Close()
	a.do("", http.MethodGet, "/readyz", "").problem(t, http.StatusServiceUnavailable, "the store is not ready")
	a.do("", http.MethodGet, "/healthz", "").want(t, http.StatusOK)
}

func TestStartAndGet(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	r := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/hello/runs", `{"inputs": {"name": "api"}}`).want(t, http.StatusCreated).json(t)
	id, _ := r["run_id"].(string)
	if r["workflow"] != "hello" || r["version"] != "1.0.0" || r["status"] != "pending" || id == "" {
		t.Fatalf("start answered %v", r)
	}
	// The same inputs name the same run (the key): 200 with it, nothing new.
	again := a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/hello/runs", `{"inputs": {"name": "api"}}`).want(t, http.StatusOK).json(t)
	if again["run_id"] != id {
		t.Fatalf("a start with the same key answered run %v, want %s", again["run_id"], id)
	}
	got := a.do(store.ScopeRead, http.MethodGet, "/v1/runs/"+id[:10], "").want(t, http.StatusOK).json(t)
	if got["run_id"] != id {
		t.Fatalf("GET by prefix answered %v", got["run_id"])
	}
	runs, err := a.st.RunList(a.ctx, store.RunListParams{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs stored: %v, %v; want 1", runs, err)
	}
}

func TestAuth(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	a.do("", http.MethodPost, "/v1/workflows/hello/runs", `{}`).problem(t, http.StatusUnauthorized, "no token")
	a.do(store.ScopeRead, http.MethodPost, "/v1/workflows/hello/runs", `{}`).problem(t, http.StatusForbidden, `token "read-token" has scope read`, "needs scope write")
	req, _ := http.NewRequest(http.MethodGet, a.hs.URL+"/v1/runs/x", nil)
	req.Header.Set("Authorization", "Bearer flowrun_nope")
	a.send(req).problem(t, http.StatusUnauthorized, "not known or was revoked")
	req.Header.Set("Authorization", "Basic abc")
	a.send(req).problem(t, http.StatusUnauthorized, `not "Bearer TOKEN"`)
	if _, err := a.st.TokenRevoke(a.ctx, "admin-token"); err != nil {
		t.Fatal(err)
	}
	a.do(store.ScopeAdmin, http.MethodGet, "/v1/runs/x", "").problem(t, http.StatusUnauthorized, "revoked")
	runs, _ := a.st.RunList(a.ctx, store.RunListParams{})
	if len(runs) != 0 {
		t.Fatalf("refused requests wrote %d runs", len(runs))
	}
}

func TestRateLimit(t *testing.T) {
	a := newAPI(t, func(o *Options) { o.Rate = 1; o.Burst = 2 })
	a.do(store.ScopeRead, http.MethodGet, "/v1/runs/x", "").want(t, http.StatusNotFound)
	a.do(store.ScopeRead, http.MethodGet, "/v1/runs/x", "").want(t, http.StatusNotFound)
	r := a.do(store.ScopeRead, http.MethodGet, "/v1/runs/x", "")
	r.problem(t, http.StatusTooManyRequests, `token "read-token" made more than 1 requests a second`)
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q, want 1", r.header.Get("Retry-After"))
	}
	// Another token has its own bucket; time refills this one.
	a.do(store.ScopeWrite, http.MethodGet, "/v1/runs/x", "").want(t, http.StatusNotFound)
	a.clk.Advance(1000 * 1000 * 1000)
	a.do(store.ScopeRead, http.MethodGet, "/v1/runs/x", "").want(t, http.StatusNotFound)
}

func TestBadStartInput(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	for _, c := range []struct {
		name, path, body string
		status           int
		parts            []string
		field            string
	}{
		{"malformed", "/v1/workflows/hello/runs", `{"inputs": {`, 400, []string{"not valid JSON"}, ""},
		{"trailing", "/v1/workflows/hello/runs", `{} {}`, 400, []string{"data after its JSON object"}, ""},
		{"not an object", "/v1/workflows/hello/runs", `[1]`, 400, []string{"is a list, not a JSON object"}, ""},
		{"null", "/v1/workflows/hello/runs", `null`, 400, []string{"is null, not a JSON object", `"inputs"`}, ""},
		{"null and more", "/v1/workflows/hello/runs", ` null {}`, 400, []string{"is null, not a JSON object"}, ""},
		{"a string", "/v1/workflows/hello/runs", `"x"`, 400, []string{"is a string, not a JSON object"}, ""},
		{"unknown field", "/v1/workflows/hello/runs", `{"input": {}}`, 400, []string{`unknown field "input"`, `"inputs"`}, "input"},
		{"inputs not object", "/v1/workflows/hello/runs", `{"inputs": "x"}`, 400, []string{`field "inputs" is a string, not an object`}, "inputs"},
		{"wrong type", "/v1/workflows/hello/runs", `{"inputs": {"count": "ten"}}`, 422, []string{`input "count"`}, "count"},
		{"unknown input", "/v1/workflows/hello/runs", `{"inputs": {"nam": "x"}}`, 422, []string{`workflow "hello" has no input "nam"; it declares "count", "name"`}, "nam"},
		{"unknown workflow", "/v1/workflows/helo/runs", `{}`, 404, []string{`no version of workflow "helo" is stored`, `Did you mean "hello"?`}, ""},
		{"no version", "/v1/workflows/hello/runs", `{"version": "2"}`, 404, []string{`matches version "2"`}, ""},
		{"bad version", "/v1/workflows/hello/runs", `{"version": "x"}`, 400, []string{`version pin "x" is not valid`}, "version"},
		{"bad wait", "/v1/workflows/hello/runs", `{"wait": "soon"}`, 400, []string{`wait "soon" is not a duration`}, "wait"},
		{"deep", "/v1/workflows/hello/runs", `{"inputs": {"name": ` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`, 400, []string{"nests deeper"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := a.on(t).do(store.ScopeWrite, http.MethodPost, c.path, c.body).problem(t, c.status, c.parts...)
			if f, _ := p["field"].(string); f != c.field {
				t.Fatalf("field %q, want %q", f, c.field)
			}
		})
	}
	big := `{"inputs": {"name": "` + strings.Repeat("x", 2<<20) + `"}}`
	a.do(store.ScopeWrite, http.MethodPost, "/v1/workflows/hello/runs", big).problem(t, http.StatusRequestEntityTooLarge, "larger than 1048576 bytes")
	runs, _ := a.st.RunList(a.ctx, store.RunListParams{})
	if len(runs) != 0 {
		t.Fatalf("refused requests wrote %d runs", len(runs))
	}
}

func TestBadPaths(t *testing.T) {
	a := newAPI(t)
	for _, p := range []string{"/v1/runs/../workflows", "/v1/runs/a%2Fb", "/v1/runs/a%5cb", "/v1//runs", "/v1/./runs/x"} {
		req, _ := http.NewRequest(http.MethodGet, a.hs.URL+"/", nil)
		req.URL.RawPath, req.URL.Path = "", ""
		req.URL.Opaque = p // sent as it is, not cleaned
		a.send(req).problem(t, http.StatusBadRequest, "path")
	}
	a.do(store.ScopeRead, http.MethodGet, "/v1/nothing", "").problem(t, http.StatusNotFound, "no route GET /v1/nothing")
	r := a.do(store.ScopeRead, http.MethodDelete, "/v1/runs/x", "")
	r.problem(t, http.StatusMethodNotAllowed, "use GET")
	if r.header.Get("Allow") != "GET" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
}

// TestNoAuth: without auth the routes are served without a token.
func TestNoAuth(t *testing.T) {
	a := newAPI(t, func(o *Options) { o.NoAuth = true })
	a.apply(helloHCL)
	a.do("", http.MethodPost, "/v1/workflows/hello/runs", `{}`).want(t, http.StatusCreated)
	a.do("", http.MethodGet, "/v1/runs", "").want(t, http.StatusOK)
}

// TestTokenRoutes: an admin token lists, creates and revokes tokens; the
// created token works at once and is shown only in its creation's answer.
func TestTokenRoutes(t *testing.T) {
	a := newAPI(t)
	var list []map[string]any
	decode(t, a.do(store.ScopeAdmin, http.MethodGet, "/v1/tokens", "").want(t, http.StatusOK).body, &list)
	if len(list) != 4 || list[0]["name"] != "admin-token" || list[0]["token"] != nil {
		t.Fatalf("tokens: %v", list)
	}
	c := a.do(store.ScopeAdmin, http.MethodPost, "/v1/tokens", `{"name": "bot", "scope": "read"}`).want(t, http.StatusCreated).json(t)
	tok, _ := c["token"].(string)
	if c["name"] != "bot" || c["scope"] != "read" || !strings.HasPrefix(tok, "flowrun_") {
		t.Fatalf("created %v", c)
	}
	req, _ := http.NewRequest(http.MethodGet, a.hs.URL+"/v1/runs", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	a.send(req).want(t, http.StatusOK)
	a.do(store.ScopeAdmin, http.MethodPost, "/v1/tokens", `{"name": "bot"}`).problem(t, http.StatusConflict, `a token named "bot" exists`)
	a.do(store.ScopeAdmin, http.MethodPost, "/v1/tokens", `{"name": "b o t"}`).problem(t, http.StatusBadRequest, `token name "b o t" is not`)
	a.do(store.ScopeAdmin, http.MethodPost, "/v1/tokens", `{"name": "x", "scope": "root"}`).problem(t, http.StatusBadRequest, `scope "root" is not read, write, deploy or admin`)
	a.do(store.ScopeAdmin, http.MethodDelete, "/v1/tokens/bot", "").want(t, http.StatusOK)
	a.send(req).problem(t, http.StatusUnauthorized, "revoked")
	a.do(store.ScopeAdmin, http.MethodDelete, "/v1/tokens/bot", "").problem(t, http.StatusNotFound, `no token is named "bot"`)
	toks, _ := a.st.TokenList(a.ctx)
	for _, tk := range toks {
		if strings.Contains(tk.Hash, tok) || tk.Hash == tok {
			t.Fatal("a token is stored as it is")
		}
	}
}
