package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/backend"
)

const testHCL = `workflow "w" {
  version = "1.0.0"
  input "n" { type = string }
  key = "input.n"
  step "a" {
    set { v = "{{ input.n }}" }
  }
  step "ask" {
    depends_on = [step.a]
    wait {
      signal = "go"
      type   = object({ ok = bool })
    }
  }
}
`

// site is a dashboard over a fresh store with one parked run whose key is
// markup, and a token of each scope.
type site struct {
	t      *testing.T
	srv    *httptest.Server
	st     store.Store
	door   *api.Local
	eng    *interp.Engine
	runID  string
	tokens map[store.TokenScope]string
	clk    *clock.Fake
}

func newSite(t *testing.T) *site {
	t.Helper()
	ctx := context.Background()
	o, err := backend.Open(ctx, filepath.Join(t.TempDir(), "flowrun.db"), backend.Options{CreateFile: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Store.Close() })
	eng := interp.New(o.Store, interp.Options{})
	door := api.NewLocal(eng, api.LocalOptions{})
	mod, diags := lang.LoadSources([]lang.Source{{Name: "w.hcl", Src: []byte(testHCL)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	v, _, err := door.Start(ctx, api.StartRequest{Workflow: "w", Inputs: map[string]any{"n": `<script>alert(1)</script>`}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Drive(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	s := &site{t: t, st: o.Store, door: door, eng: eng, runID: v.RunID, tokens: map[store.TokenScope]string{}, clk: clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))}
	for _, sc := range []store.TokenScope{store.ScopeRead, store.ScopeWrite} {
		tok, err := api.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Store.TokenCreate(ctx, store.TokenCreateParams{Name: map[store.TokenScope]string{store.ScopeRead: "reader", store.ScopeWrite: "writer"}[sc], Scope: sc, Hash: api.HashToken(tok)}); err != nil {
			t.Fatal(err)
		}
		s.tokens[sc] = tok
	}
	h := New(Options{Door: door, Tokens: o.Store.TokenLookup, Clock: s.clk})
	s.srv = httptest.NewServer(h)
	t.Cleanup(s.srv.Close)
	return s
}

// browser is a client with its own cookies.
type browser struct {
	t  *testing.T
	s  *site
	hc *http.Client
}

func (s *site) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: s.t, s: s, hc: &http.Client{Jar: jar}}
}

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.hc.Get(b.s.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	resp, err := b.hc.PostForm(b.s.srv.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on the page:\n%s", page)
	}
	return m[1]
}

// signIn signs the browser in with token and returns the runs page.
func (b *browser) signIn(token string) string {
	b.t.Helper()
	_, login := b.get("/login?next=/runs")
	code, page := b.post("/login", url.Values{"csrf": {csrfOf(b.t, login)}, "token": {token}, "next": {"/runs"}})
	if code != http.StatusOK || !strings.Contains(page, "<h1>Runs</h1>") {
		b.t.Fatalf("sign-in answered %d:\n%s", code, page)
	}
	return page
}

func TestSignInAndScopes(t *testing.T) {
	s := newSite(t)
	b := s.browser()
	// Not signed in: a page sends to the sign-in page, an action is refused.
	if code, page := b.get("/runs/" + s.runID); code != http.StatusOK || !strings.Contains(page, "<h1>Sign in</h1>") {
		t.Fatalf("a page without a session: %d\n%s", code, page)
	}
	if code, _ := b.post("/runs/"+s.runID+"/cancel", url.Values{}); code != http.StatusUnauthorized {
		t.Fatalf("an action without a session answered %d", code)
	}
	// A wrong token is refused on the sign-in page.
	_, login := b.get("/login")
	if code, page := b.post("/login", url.Values{"csrf": {csrfOf(t, login)}, "token": {"nope"}}); code != http.StatusUnauthorized || !strings.Contains(page, "not known or was revoked") {
		t.Fatalf("a wrong token: %d\n%s", code, page)
	}
	// A sign-in form that did not come from the page is refused.
	if code, _ := b.post("/login", url.Values{"csrf": {"forged"}, "token": {s.tokens[store.ScopeWrite]}}); code != http.StatusForbidden {
		t.Fatalf("a forged sign-in form answered %d", code)
	}

	// A read token sees the run and no action; its actions are refused.
	b.signIn(s.tokens[store.ScopeRead])
	_, page := b.get("/runs/" + s.runID)
	if !strings.Contains(page, "st-waiting") || strings.Contains(page, "confirm/cancel") || strings.Contains(page, "Send signal") {
		t.Fatalf("the run's page for a read token:\n%s", page)
	}
	if code, page := b.post("/runs/"+s.runID+"/cancel", url.Values{"csrf": {csrfOf(t, page)}}); code != http.StatusForbidden || !strings.Contains(page, "scope write") {
		t.Fatalf("a read token's cancel: %d\n%s", code, page)
	}

	// A write token acts; a form without the CSRF token does nothing.
	w := s.browser()
	w.signIn(s.tokens[store.ScopeWrite])
	_, page = w.get("/runs/" + s.runID)
	if !strings.Contains(page, "confirm/cancel") || !strings.Contains(page, "Send signal go") {
		t.Fatalf("the run's page for a write token lacks its actions:\n%s", page)
	}
	if code, _ := w.post("/runs/"+s.runID+"/cancel", url.Values{}); code != http.StatusForbidden {
		t.Fatalf("a cancel without the CSRF token answered %d", code)
	}
	csrf := csrfOf(t, page)
	// A payload of the wrong type is refused with the type; nothing is sent.
	if code, page := w.post("/runs/"+s.runID+"/signal", url.Values{"csrf": {csrf}, "name": {"go"}, "data": {`{"ok": 1}`}}); code != http.StatusUnprocessableEntity || !strings.Contains(page, "object({ok = bool})") {
		t.Fatalf("a signal of the wrong type: %d\n%s", code, page)
	}
	// A retry of the waiting run is refused; the run goes on under a
	// worker, which the page says, not a resume in someone's terminal.
	if code, page := w.post("/runs/"+s.runID+"/retry", url.Values{"csrf": {csrf}}); code != http.StatusConflict ||
		!strings.Contains(page, "goes on with the unfinished run by itself") || strings.Contains(page, "flowrun resume") {
		t.Fatalf("a retry of a waiting run: %d\n%s", code, page)
	}
	if code, page := w.post("/runs/"+s.runID+"/signal", url.Values{"csrf": {csrf}, "name": {"go"}, "data": {`{"ok": true}`}}); code != http.StatusOK || !strings.Contains(page, "Signal go sent to run "+s.runID) {
		t.Fatalf("a signal: %d\n%s", code, page)
	}

	// Revoking the token ends its session.
	if _, err := s.st.TokenRevoke(context.Background(), "writer"); err != nil {
		t.Fatal(err)
	}
	if _, page := w.get("/runs"); !strings.Contains(page, "<h1>Sign in</h1>") {
		t.Fatalf("a revoked token's session goes on:\n%s", page)
	}

	// A session ends 8 hours after sign-in.
	later := s.browser()
	later.signIn(s.tokens[store.ScopeRead])
	s.clk.Advance(sessionLife - time.Second)
	if _, page := later.get("/runs"); !strings.Contains(page, "<h1>Runs</h1>") {
		t.Fatalf("a session ended before its time:\n%s", page)
	}
	s.clk.Advance(time.Second)
	if _, page := later.get("/runs"); !strings.Contains(page, "<h1>Sign in</h1>") {
		t.Fatalf("a session goes on past its time:\n%s", page)
	}
}

// Values from a run (here its key) are text on every page, never markup,
// and every answer carries the security headers.
func TestPagesEscapeAndHeaders(t *testing.T) {
	s := newSite(t)
	b := s.browser()
	b.signIn(s.tokens[store.ScopeRead])
	for _, path := range []string{"/runs", "/runs/" + s.runID, "/runs/" + s.runID + "/steps/a", "/workflows/w", "/ops"} {
		resp, err := b.hc.Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s answered %d:\n%s", path, resp.StatusCode, body)
		}
		if strings.Contains(string(body), "<script>alert") {
			t.Errorf("%s holds the run's key as markup", path)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", path)
		}
	}
	if _, page := b.get("/runs/" + s.runID); !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the run's key is not shown as text:\n%s", page)
	}
	// A version's page shows the file it was applied from, highlighted.
	if _, page := b.get("/workflows/w/versions/1.0.0"); !strings.Contains(page, "Source of 1.0.0 (w.hcl)") ||
		!strings.Contains(page, `<span class="hl-str">1.0.0</span>`) || !strings.Contains(page, `<span class="hl-id">workflow</span>`) {
		t.Errorf("the version's page does not show its source:\n%s", page)
	}
	// An unknown workflow or version is a 404 naming what is near.
	if code, page := b.get("/workflows/ww"); code != http.StatusNotFound || !strings.Contains(page, `&#34;w&#34;`) {
		t.Errorf("an unknown workflow answered %d:\n%s", code, page)
	}
	if code, page := b.get("/workflows/w/versions/9.9.9"); code != http.StatusNotFound || !strings.Contains(page, "no stored version 9.9.9") {
		t.Errorf("an unknown version answered %d:\n%s", code, page)
	}
	// An unknown run is a 404 naming what is near.
	if code, page := b.get("/runs/ZZZZZZZZZZ"); code != http.StatusNotFound {
		t.Errorf("an unknown run answered %d:\n%s", code, page)
	}
	// A time range: the run is in a range around now, not in one before.
	if _, page := b.get("/runs?from=2000-01-01T00:00&to=2999-01-01T00:00"); !strings.Contains(page, s.runID) {
		t.Errorf("a range around now does not list the run")
	}
	if _, page := b.get("/runs?to=2000-01-01T00:00"); strings.Contains(page, s.runID) {
		t.Errorf("a range before the run lists it")
	}
	if code, _ := b.get("/runs?from=yesterday"); code != http.StatusBadRequest {
		t.Errorf("a bound that is no time answered %d", code)
	}
	// Other text in the search box finds the runs whose id, key or error
	// holds it.
	if _, page := b.get("/runs?q=ALERT"); !strings.Contains(page, s.runID) {
		t.Errorf("the search for text of the run's key does not list it:\n%s", page)
	}
	if _, page := b.get("/runs?q=nothing-like-it"); strings.Contains(page, s.runID) || !strings.Contains(page, "No run matches") {
		t.Errorf("the search for other text lists the run:\n%s", page)
	}
	// The search box takes the CLI's run references.
	resp, err := b.hc.Get(s.srv.URL + "/runs?q=" + url.QueryEscape("w@last"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/runs/"+s.runID {
		t.Errorf("the search for w@last went to %s", resp.Request.URL.Path)
	}
}

// A signal's form asks an object of scalars field by field; the confirm
// page shows the payload composed from them, and a number that does not
// parse is refused naming its field.
func TestSignalFormFields(t *testing.T) {
	s := newSite(t)
	b := s.browser()
	b.signIn(s.tokens[store.ScopeWrite])
	_, page := b.get("/runs/" + s.runID)
	if !strings.Contains(page, `name="f.ok"`) || !strings.Contains(page, `type="checkbox"`) {
		t.Fatalf("the signal form does not ask ok as a box:\n%s", page)
	}
	code, page := b.get("/runs/" + s.runID + "/confirm/signal?name=go&mode=fields&k.ok=bool&f.ok=true")
	if code != http.StatusOK || !strings.Contains(page, `Payload: {&#34;ok&#34;:true}`) {
		t.Fatalf("the confirm page of a ticked box: %d\n%s", code, page)
	}
	if _, page := b.get("/runs/" + s.runID + "/confirm/signal?name=go&mode=fields&k.ok=bool"); !strings.Contains(page, `Payload: {&#34;ok&#34;:false}`) {
		t.Fatalf("a box not ticked is not false:\n%s", page)
	}
	if code, page := b.get("/runs/" + s.runID + "/confirm/signal?name=go&mode=fields&k.n=number&f.n=many"); code != http.StatusUnprocessableEntity || !strings.Contains(page, "Field n must be a number") {
		t.Fatalf("a number that does not parse: %d\n%s", code, page)
	}
}

// A workflow's page lists its schedules, each next fire in its own time
// zone with UTC beside it, with their actions for a write token.
func TestWorkflowSchedules(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	mod, diags := lang.LoadSources([]lang.Source{{Name: "nightly.hcl", Src: []byte(`workflow "nightly" {
  version = "1.0.0"
  schedule "each_night" {
    cron     = "0 2 * * *"
    timezone = "Europe/Berlin"
  }
  step "a" {
    set { v = 1 }
  }
}`)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := s.door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(s.tokens[store.ScopeWrite])
	_, page := b.get("/workflows/nightly")
	if !regexp.MustCompile(`02:00 Europe/Berlin \(0[01]:00 UTC\)`).MatchString(page) || !strings.Contains(page, "/ops/schedules/nightly/each_night/confirm/pause") {
		t.Fatalf("the workflow's page does not show its schedule in its zone with its actions:\n%s", page)
	}
}

// A run of many steps stays a page of bounded size: the graph draws the
// first 400 steps and says so, the table lists 500 rows a page with a link
// to the next; a step's output of nearly 1 MiB is shown cut, with a note.
func TestBigRun(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	const n = 1200
	var src strings.Builder
	src.WriteString("workflow \"big\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    exec { command = [\"sh\", \"-c\", \"head -c 900000 /dev/zero | tr '\\\\\\\\0' x\"] }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&src, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    set { v = %d }\n  }\n", i, i-1, i)
	}
	src.WriteString("}\n")
	mod, diags := lang.LoadSources([]lang.Source{{Name: "big.hcl", Src: []byte(src.String())}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := s.door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	v, _, err := s.door.Start(ctx, api.StartRequest{Workflow: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Drive(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(s.tokens[store.ScopeRead])
	_, page := b.get("/runs/" + v.RunID)
	if !strings.Contains(page, "The graph has 1200 steps; the first 400 are drawn") {
		t.Errorf("the big run's graph is not cut with a note")
	}
	if got := strings.Count(page, "data-step-row="); got != 500 {
		t.Errorf("the big run's page lists %d step rows, want 500", got)
	}
	if !strings.Contains(page, "?steps=500") {
		t.Errorf("the big run's page has no link to its next rows")
	}
	_, page = b.get("/runs/" + v.RunID + "?steps=1000")
	if got := strings.Count(page, "data-step-row="); got != 200 || !strings.Contains(page, `data-step-row="s1199"`) {
		t.Errorf("the last page of rows lists %d, want 200 ending with s1199", got)
	}
	_, page = b.get("/runs/" + v.RunID + "/steps/s0")
	if !strings.Contains(page, "(cut: the value is longer") || len(page) > 300<<10 {
		t.Errorf("a step's output of 900 kB is shown whole (%d bytes of page)", len(page))
	}
}

// A foreach step's page shows its items a page at a time, read a page at
// a time (the door folds the run and reads one page of item rows), with
// their values and done/total.
func TestForeachItemsPaged(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	mod, diags := lang.LoadSources([]lang.Source{{Name: "fe.hcl", Src: []byte(`workflow "fe" {
  version = "1.0.0"
  input "n" { type = list(number) }
  step "each" {
    foreach {
      items       = "input.n"
      concurrency = 16
    }
    set { v = "{{ item * 2 }}" }
  }
}`)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := s.door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	ns := make([]any, 450)
	for i := range ns {
		ns[i] = float64(i)
	}
	v, _, err := s.door.Start(ctx, api.StartRequest{Workflow: "fe", Inputs: map[string]any{"n": ns}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Drive(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(s.tokens[store.ScopeRead])
	_, page := b.get("/runs/" + v.RunID + "/steps/each")
	if !strings.Contains(page, "Items (450/450 done)") || !strings.Contains(page, "?items=200") {
		t.Fatalf("the foreach's page does not show its totals and a next page:\n%.2000s", page)
	}
	if got := strings.Count(page, "<tr><td>"); got < 200 {
		t.Errorf("the first page shows %d rows", got)
	}
	_, page = b.get("/runs/" + v.RunID + "/steps/each?items=400")
	if !strings.Contains(page, "<td>449</td>") || strings.Contains(page, "<td>399</td>") || strings.Contains(page, "?items=600") {
		t.Errorf("the last page of items is wrong:\n%.3000s", page)
	}
}

// A server without auth asks nobody to sign in, acts with scope admin,
// still checks the CSRF token, and keeps no session per browser: requests
// without cookies cannot fill the sessions.
func TestNoAuth(t *testing.T) {
	s := newSite(t)
	srv := httptest.NewServer(New(Options{Door: s.door, Tokens: s.st.TokenLookup, NoAuth: true, Clock: s.clk}))
	defer srv.Close()
	var page string
	for range 3 * maxSessions / 1000 {
		resp, err := http.Get(srv.URL + "/runs/" + s.runID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = string(b)
		if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 {
			t.Fatalf("a page without auth: %d, cookies %v", resp.StatusCode, resp.Cookies())
		}
	}
	if !strings.Contains(page, "confirm/cancel") {
		t.Fatalf("a server without auth shows no action:\n%s", page)
	}
	resp, err := http.PostForm(srv.URL+"/runs/"+s.runID+"/cancel", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cancel without the CSRF token answered %d", resp.StatusCode)
	}
	resp, err = http.PostForm(srv.URL+"/runs/"+s.runID+"/cancel", url.Values{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a cancel with the CSRF token answered %d", resp.StatusCode)
	}
}
