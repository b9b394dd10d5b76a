package web

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// The sign-in page's command line names every scope a token can have.
func TestLoginNamesEveryScope(t *testing.T) {
	s := newSite(t)
	_, page := s.browser().get("/login")
	if !strings.Contains(page, "flowrun tokens create NAME --scope read|write|deploy|admin") {
		t.Fatalf("the sign-in page does not name every scope:\n%s", page)
	}
}

// The runs page's "Older runs" link opens the next page with the page's
// filters: the link's query was escaped whole ("before%3dID"), so the
// server read no cursor and the link showed the first page again.
func TestRunsOlderPage(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	for i := range runsPageSize + 10 {
		if _, _, err := s.door.Start(ctx, api.StartRequest{Workflow: "w", Inputs: map[string]any{"n": fmt.Sprintf("n%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	b := s.browser()
	b.signIn(s.tokens[store.ScopeRead])
	seen := map[string]int{}
	path := "/runs?workflow=w&status=pending&status=waiting"
	for page := 1; path != ""; page++ {
		if page > 3 {
			t.Fatalf("more than 2 pages of %d runs", runsPageSize+11)
		}
		code, body := b.get(path)
		if code != http.StatusOK {
			t.Fatalf("%s answered %d:\n%.2000s", path, code, body)
		}
		for _, m := range runLink.FindAllStringSubmatch(body, -1) {
			seen[m[1]]++
		}
		path = ""
		if m := olderLink.FindStringSubmatch(body); m != nil {
			path = html.UnescapeString(m[1])
			u, err := url.Parse(path)
			if err != nil {
				t.Fatal(err)
			}
			if q := u.Query(); q.Get("before") == "" || q.Get("workflow") != "w" || len(q["status"]) != 2 {
				t.Fatalf("the Older runs link %q does not keep the filters and name the last run", path)
			}
		}
	}
	if len(seen) != runsPageSize+11 {
		t.Errorf("the pages listed %d runs, want %d", len(seen), runsPageSize+11)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("run %s was listed on %d pages", id, n)
		}
	}
}

var (
	runLink   = regexp.MustCompile(`<a href="/runs/([0-9A-Z]{26})">`)
	olderLink = regexp.MustCompile(`<a href="([^"]*)" rel="next">Older runs</a>`)
)

// faultyDoor fails to read a run with the store's own words, which name
// the database file.
type faultyDoor struct{ api.Service }

func (faultyDoor) Run(context.Context, string) (*interp.RunView, error) {
	return nil, fmt.Errorf("reading run: open /srv/secret/flowrun.db: %w", store.ErrBusy)
}

// A page the store fails is a 503 that says what kind of fault it was and
// gives a request id, as the API's answers do; the store's text, which can
// name the database file or server, goes to the log only (security.md
// §11).
func TestStoreFaultPageHidesStoreText(t *testing.T) {
	s := newSite(t)
	var log bytes.Buffer
	h := New(Options{Door: faultyDoor{s.door}, Tokens: s.st.TokenLookup, Clock: s.clk, Log: slog.New(slog.NewTextHandler(&log, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	site := *s
	site.srv = srv
	b := site.browser()
	b.signIn(s.tokens[store.ScopeRead])
	code, page := b.get("/runs/" + s.runID)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("a store fault answered %d:\n%s", code, page)
	}
	if strings.Contains(page, "/srv/secret") {
		t.Errorf("the page shows the store's text:\n%s", page)
	}
	m := regexp.MustCompile(`database is busy; the server logged the detail under request id ([0-9a-f]{16})`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, "Nothing was lost") {
		t.Fatalf("the page does not say the kind of fault, a request id and that nothing was lost:\n%s", page)
	}
	if !strings.Contains(log.String(), "request_id="+m[1]) || !strings.Contains(log.String(), "/srv/secret/flowrun.db") {
		t.Errorf("the log has no detail under request id %s:\n%s", m[1], log.String())
	}
}

// Sign-in goes on to a page of this site only: a next that a browser
// would read as another host is /runs. A browser drops tabs and line
// breaks from a URL, so "/<TAB>/evil.example" is "//evil.example", another
// host, which the check for "//" alone let through.
func TestLoginNextStaysOnSite(t *testing.T) {
	s := newSite(t)
	b := s.browser()
	// signIn posts the sign-in form with next and returns where the
	// answer sends the browser (read as sent: Go's client would refuse a
	// Location with a control character before a browser reads it).
	signIn := func(next string) (int, string) {
		_, login := b.get("/login?next=" + url.QueryEscape(next))
		form := url.Values{"csrf": {csrfOf(t, login)}, "token": {s.tokens[store.ScopeRead]}, "next": {next}}
		req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/login", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, c := range b.hc.Jar.Cookies(req.URL) {
			req.AddCookie(c)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	for _, next := range []string{"/\t/evil.example/x", "/\n/evil.example/x", "/\r/evil.example", "//evil.example", "/\\evil.example", "https://evil.example/", "/\x7f/evil.example", "/runs/x\t"} {
		if code, loc := signIn(next); code != http.StatusSeeOther || loc != "/runs" {
			t.Errorf("sign-in with next %q answered %d, Location %q; want 303 to /runs", next, code, loc)
		}
	}
	// A path of the site, with its query, is kept.
	if _, loc := signIn("/runs?workflow=w&status=failed"); loc != "/runs?workflow=w&status=failed" {
		t.Errorf("sign-in with a path of the site went to %q", loc)
	}
}

// A store that fails for a moment while a session's token is checked is a
// 503, and the session stays: only a token the store no longer knows
// (revoked) ends it. It used to end every session it checked.
func TestTokenCheckFaultKeepsSession(t *testing.T) {
	s := newSite(t)
	var failing atomic.Bool
	tokens := func(ctx context.Context, hash string) (store.Token, error) {
		if failing.Load() {
			return store.Token{}, fmt.Errorf("reading api_tokens: %w", store.ErrBusy)
		}
		return s.st.TokenLookup(ctx, hash)
	}
	srv := httptest.NewServer(New(Options{Door: s.door, Tokens: tokens, Clock: s.clk}))
	t.Cleanup(srv.Close)
	site := *s
	site.srv = srv
	b := site.browser()
	b.signIn(s.tokens[store.ScopeRead])

	failing.Store(true)
	if code, page := b.get("/runs/" + s.runID); code != http.StatusServiceUnavailable || !strings.Contains(page, "database is busy") || strings.Contains(page, "<h1>Sign in</h1>") {
		t.Fatalf("a page while the token check fails: %d\n%s", code, page)
	}
	if code, _ := b.get("/live/runs?after=0"); code != http.StatusServiceUnavailable {
		t.Errorf("a live request while the token check fails answered %d, want 503", code)
	}
	failing.Store(false)
	if code, page := b.get("/runs/" + s.runID); code != http.StatusOK || !strings.Contains(page, "Run "+s.runID) {
		t.Fatalf("the session did not outlast the store's fault: %d\n%.2000s", code, page)
	}
}

// A session whose token is revoked ends at its next request, and the
// sign-in page it is sent to says why.
func TestRevokedSessionSaysWhy(t *testing.T) {
	s := newSite(t)
	b := s.browser()
	b.signIn(s.tokens[store.ScopeWrite])
	if _, err := s.st.TokenRevoke(context.Background(), "writer"); err != nil {
		t.Fatal(err)
	}
	code, page := b.get("/runs/" + s.runID)
	if code != http.StatusOK || !strings.Contains(page, "<h1>Sign in</h1>") || !strings.Contains(page, "Your session ended: the token you signed in with was revoked.") {
		t.Fatalf("a page after the token was revoked: %d\n%s", code, page)
	}
	// Signed out otherwise, the page says nothing of a revoked token.
	if _, page := s.browser().get("/runs"); strings.Contains(page, "revoked") {
		t.Errorf("the sign-in page of a browser never signed in speaks of a revoked token:\n%s", page)
	}
}
