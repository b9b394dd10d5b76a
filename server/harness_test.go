package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// testAPI is one test's server over a fresh SQLite file: the real handler
// behind httptest, a fake clock for the server (rate limits), and tokens
// of each scope.
type testAPI struct {
	t      *testing.T
	ctx    context.Context
	st     *sqlite.Store
	clk    *clock.Fake
	eng    *interp.Engine
	srv    *Server
	hs     *httptest.Server
	tokens map[store.TokenScope]string
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newAPI(t *testing.T, opts ...func(*Options)) *testAPI {
	t.Helper()
	return newAPIOver(t, nil, opts...)
}

// newAPIOver is newAPI whose engine and server use wrap(the SQLite store)
// (the store itself when wrap is nil): a store that fails on purpose.
func newAPIOver(t *testing.T, wrap func(*sqlite.Store) store.Store, opts ...func(*Options)) *testAPI {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "flowrun.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	a := &testAPI{t: t, ctx: ctx, st: st, clk: clock.NewFake(t0), tokens: map[store.TokenScope]string{}}
	o := Options{Clock: a.clk, Log: slog.New(slog.DiscardHandler)}
	for _, f := range opts {
		f(&o)
	}
	// The engine runs on the server's clock: a test that gives the server
	// the real clock (a worker, SSE) gives it to the engine too.
	var es store.Store = st
	if wrap != nil {
		es = wrap(st)
	}
	a.eng = interp.New(es, interp.Options{
		Clock: o.Clock, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "t"},
		Rand: rand.New(rand.NewPCG(1, 2)), ParkWait: -1, Poll: 20 * time.Millisecond,
		Getenv: func(string) string { return "" },
	})
	o.Engine = a.eng
	a.srv = New(o)
	a.hs = httptest.NewServer(a.srv)
	t.Cleanup(a.hs.Close)
	t.Cleanup(a.srv.CloseStreams)
	for _, sc := range store.Scopes {
		tok, err := api.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.TokenCreate(ctx, store.TokenCreateParams{Name: string(sc) + "-token", Scope: sc, Hash: api.HashToken(tok), Now: t0}); err != nil {
			t.Fatal(err)
		}
		a.tokens[sc] = tok
	}
	return a
}

// on returns the testAPI for a subtest: its failures are t's.
func (a *testAPI) on(t *testing.T) *testAPI {
	c := *a
	c.t = t
	return &c
}

// apply compiles HCL source and stores its workflows, as apply does.
func (a *testAPI) apply(src string) {
	a.t.Helper()
	m, diags := lang.LoadFile("test.hcl", []byte(src))
	if diags.HasErrors() {
		a.t.Fatalf("compile: %s", diags.Error())
	}
	for _, w := range m.Workflows {
		if _, err := a.eng.StoreGraph(a.ctx, w.Graph); err != nil {
			a.t.Fatalf("store graph: %v", err)
		}
	}
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (r answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

// do sends a request with the token of scope (none for "") and reads the
// answer; every answer is checked against spec/openapi.yaml.
func (a *testAPI) do(scope store.TokenScope, method, path, body string) answer {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(a.ctx, method, a.hs.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if scope != "" {
		req.Header.Set("Authorization", "Bearer "+a.tokens[scope])
	}
	return a.send(req)
}

func (a *testAPI) send(req *http.Request) answer {
	a.t.Helper()
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := a.hs.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	ans := answer{status: resp.StatusCode, header: resp.Header, body: b}
	checkAnswer(a.t, req, reqBody, ans)
	return ans
}

// want fails unless the answer has the status; it returns the answer.
func (r answer) want(t *testing.T, status int) answer {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body:\n%s", r.status, status, r.body)
	}
	return r
}

// problem checks a problem+json answer: its status and that its detail
// holds each of parts.
func (r answer) problem(t *testing.T, status int, parts ...string) map[string]any {
	t.Helper()
	r.want(t, status)
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	m := r.json(t)
	if m["status"] != float64(status) {
		t.Fatalf("problem status %v, want %d", m["status"], status)
	}
	d, _ := m["detail"].(string)
	for _, p := range parts {
		if !strings.Contains(d, p) {
			t.Fatalf("problem detail %q lacks %q", d, p)
		}
	}
	return m
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
