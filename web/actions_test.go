package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
)

const opsHCL = `workflow "nightly" {
  version = "1.0.0"
  schedule "each_night" {
    cron = "0 2 * * *"
  }
  step "a" {
    set { v = 1 }
  }
}
workflow "dl" {
  version = "1.0.0"
  step "each" {
    foreach {
      items      = "[1]"
      on_failure = "dead_letter"
    }
    exec { command = ["sh", "-c", "exit 1"] }
  }
}
`

// opsSite is a site with a schedule, an open dead letter and an admin
// token.
func opsSite(t *testing.T) (*site, string) {
	t.Helper()
	s := newSite(t)
	ctx := context.Background()
	mod, diags := lang.LoadSources([]lang.Source{{Name: "ops.hcl", Src: []byte(opsHCL)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := s.door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	v, _, err := s.door.Start(ctx, api.StartRequest{Workflow: "dl"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Drive(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	tok, err := api.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.TokenCreate(ctx, store.TokenCreateParams{Name: "boss", Scope: store.ScopeAdmin, Hash: api.HashToken(tok)}); err != nil {
		t.Fatal(err)
	}
	return s, tok
}

// Every action of the operations and tokens pages (redrive, drop, pause,
// unpause, trigger, revoke) is a link to a page that says what it will do
// and posts it only from its button; nothing on those pages acts at once.
func TestOpsActionsConfirm(t *testing.T) {
	s, admin := opsSite(t)
	dls, err := s.door.DeadLetters(context.Background(), false)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters: %v, %v", dls, err)
	}
	dl := dls[0].ID
	b := s.browser()
	b.signIn(admin)
	_, ops := b.get("/ops")
	_, tokens := b.get("/ops/tokens")
	_, wf := b.get("/workflows/nightly")
	for name, page := range map[string]string{"/ops": ops, "/ops/tokens": tokens, "/workflows/nightly": wf} {
		if strings.Contains(page, `method="post" action="/ops/schedules`) || strings.Contains(page, `method="post" action="/ops/dead-letters`) ||
			strings.Contains(page, `/revoke" class="inline"`) {
			t.Errorf("%s has a form that acts without a confirm page:\n%s", name, page)
		}
	}
	for _, link := range []string{"/ops/dead-letters/" + itoa(dl) + "/confirm/retry", "/ops/dead-letters/" + itoa(dl) + "/confirm/drop",
		"/ops/schedules/nightly/each_night/confirm/pause", "/ops/schedules/nightly/each_night/confirm/trigger"} {
		if !strings.Contains(ops, `href="`+link+`"`) {
			t.Errorf("/ops has no link to %s", link)
		}
	}
	if !strings.Contains(tokens, `href="/ops/tokens/writer/confirm/revoke"`) {
		t.Errorf("/ops/tokens has no link to revoke's confirm page:\n%s", tokens)
	}
	if !strings.Contains(wf, `href="/ops/schedules/nightly/each_night/confirm/trigger?back=/workflows/nightly"`) {
		t.Errorf("the workflow's page has no link to trigger's confirm page:\n%s", wf)
	}

	for _, c := range []struct{ page, says, post, done string }{
		{"/ops/dead-letters/" + itoa(dl) + "/confirm/drop", "Drop dead letter " + itoa(dl) + "?", "/ops/dead-letters/" + itoa(dl) + "/drop", "dropped"},
		{"/ops/schedules/nightly/each_night/confirm/trigger", "Trigger schedule nightly/each_night?", "/ops/schedules/nightly/each_night/trigger", "triggered"},
		{"/ops/schedules/nightly/each_night/confirm/pause", "Pause schedule nightly/each_night?", "/ops/schedules/nightly/each_night/pause", "paused"},
		{"/ops/tokens/writer/confirm/revoke", "Revoke token writer?", "/ops/tokens/writer/revoke", "revoked"},
	} {
		code, page := b.get(c.page)
		if code != http.StatusOK || !strings.Contains(page, c.says) || !strings.Contains(page, `action="`+c.post+`"`) || !strings.Contains(page, `class="confirm"`) {
			t.Fatalf("%s: %d\n%s", c.page, code, page)
		}
		code, page = b.post(c.post, url.Values{"csrf": {csrfOf(t, page)}})
		if code != http.StatusOK || !strings.Contains(page, c.done) {
			t.Fatalf("confirming %s: %d\n%s", c.page, code, page)
		}
	}
	// What is not there has no confirm page.
	for _, path := range []string{"/ops/dead-letters/" + itoa(dl) + "/confirm/drop", "/ops/dead-letters/99/confirm/retry",
		"/ops/schedules/nightly/nope/confirm/trigger", "/ops/tokens/nobody/confirm/revoke", "/ops/schedules/nightly/each_night/confirm/explode"} {
		if code, page := b.get(path); code != http.StatusNotFound {
			t.Errorf("%s answered %d:\n%s", path, code, page)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A confirm page is refused, as its action is, to a scope that cannot act
// (403 naming the scope needed), instead of offering a button whose POST
// is then refused.
func TestConfirmPagesNeedScope(t *testing.T) {
	s, _ := opsSite(t)
	dls, err := s.door.DeadLetters(context.Background(), false)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters: %v, %v", dls, err)
	}
	r := s.browser()
	r.signIn(s.tokens[store.ScopeRead])
	for _, path := range []string{"/runs/" + s.runID + "/confirm/cancel", "/runs/" + s.runID + "/confirm/signal?name=go&data=%7B%7D",
		"/ops/dead-letters/" + itoa(dls[0].ID) + "/confirm/drop", "/ops/schedules/nightly/each_night/confirm/trigger", "/ops/tokens/writer/confirm/revoke"} {
		code, page := r.get(path)
		if code != http.StatusForbidden || !strings.Contains(page, "needs a token of scope") || strings.Contains(page, `class="confirm"`) {
			t.Errorf("a read token's %s: %d\n%s", path, code, page)
		}
		// In words for the page, without the sentinel's "scope too
		// small: ", and how to go on.
		if !strings.Contains(page, "of scope read. Sign out and sign in with a token of that scope to act.") || strings.Contains(page, "scope too small") {
			t.Errorf("a read token's %s is not worded for the page:\n%s", path, page)
		}
	}
	w := s.browser()
	w.signIn(s.tokens[store.ScopeWrite])
	if code, page := w.get("/ops/tokens/reader/confirm/revoke"); code != http.StatusForbidden || !strings.Contains(page, "scope admin") || strings.Contains(page, `class="confirm"`) {
		t.Errorf("a write token's revoke confirm page: %d\n%s", code, page)
	}
	if code, page := w.get("/runs/" + s.runID + "/confirm/cancel"); code != http.StatusOK || !strings.Contains(page, "Yes, cancel") {
		t.Errorf("a write token's cancel confirm page: %d\n%s", code, page)
	}
}

// The status line of the page an action lands on holds only words the
// server signed for the session: a link's own "done" text shows nothing,
// nor does a signed link opened by another session.
func TestDoneMessageSigned(t *testing.T) {
	s, _ := opsSite(t)
	w := s.browser()
	w.signIn(s.tokens[store.ScopeWrite])
	forged := "Your session expired, go to evil.example"
	for _, path := range []string{"/runs/" + s.runID, "/ops", "/runs/" + s.runID + "?sig=00"} {
		if code, page := w.get(path + sep(path) + "done=" + url.QueryEscape(forged)); code != http.StatusOK || strings.Contains(page, "evil.example") || strings.Contains(page, `class="done"`) {
			t.Errorf("%s shows a link's own status text: %d\n%s", path, code, page)
		}
	}
	_, page := w.get("/ops/schedules/nightly/each_night/confirm/pause")
	resp, err := w.hc.PostForm(s.srv.URL+"/ops/schedules/nightly/each_night/pause", url.Values{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	landed := resp.Request.URL.RequestURI()
	if code, page := w.get(landed); code != http.StatusOK || !strings.Contains(page, `<p class="done" role="status">Schedule nightly/each_night paused.</p>`) {
		t.Fatalf("the page the pause landed on (%s): %d\n%s", landed, code, page)
	}
	o := s.browser()
	o.signIn(s.tokens[store.ScopeRead])
	if _, page := o.get(landed); strings.Contains(page, `class="done"`) {
		t.Errorf("another session shows the status of %s:\n%s", landed, page)
	}
	if _, page := w.get(strings.Replace(landed, "paused", "deleted", 1)); strings.Contains(page, `class="done"`) {
		t.Errorf("changed words show with the signature of others:\n%s", page)
	}
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

// A dead letter another process is retrying is refused on the operations
// page as on the CLI: 409 naming that process, and the letter stays open
// (the old page answered 503 "could not read or write the store").
func TestDeadLetterHeldElsewhere(t *testing.T) {
	s, admin := opsSite(t)
	ctx := context.Background()
	dls, err := s.door.DeadLetters(ctx, false)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters: %v, %v", dls, err)
	}
	dl := dls[0].ID
	if _, err := s.st.DeadLetterClaim(ctx, store.DeadLetterClaimParams{ID: dl, Owner: "elsewhere/7/dlq1", Now: time.Now(), LeaseFor: time.Hour}); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(admin)
	for _, action := range []string{"retry", "drop"} {
		_, page := b.get("/ops/dead-letters/" + itoa(dl) + "/confirm/" + action)
		code, page := b.post("/ops/dead-letters/"+itoa(dl)+"/"+action, url.Values{"csrf": {csrfOf(t, page)}})
		if code != http.StatusConflict || !strings.Contains(page, "is being retried by elsewhere/7/dlq1") {
			t.Errorf("%s of a letter held elsewhere: %d\n%s", action, code, page)
		}
	}
	if d, err := s.st.DeadLetterGet(ctx, dl); err != nil || d.Status != store.DeadLetterOpen {
		t.Errorf("the letter after both = %s, %v; want open", d.Status, err)
	}
}

// A redrive that fails again says so in the engine's words, once, as
// flowrun dlq retry does.
func TestDeadLetterRetryFailsAgain(t *testing.T) {
	s, admin := opsSite(t)
	dls, err := s.door.DeadLetters(context.Background(), false)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters: %v, %v", dls, err)
	}
	dl := itoa(dls[0].ID)
	b := s.browser()
	b.signIn(admin)
	_, page := b.get("/ops/dead-letters/" + dl + "/confirm/retry")
	code, page := b.post("/ops/dead-letters/"+dl+"/retry", url.Values{"csrf": {csrfOf(t, page)}})
	want := "Dead letter " + dl + " (each[0]) failed again: command &#34;sh&#34; exited with status 1; the letter stays open."
	if code != http.StatusOK || !strings.Contains(page, want) || strings.Count(strings.ToLower(page), "dead letter "+dl+" ") != 1 {
		t.Fatalf("the redrive that failed again (%d) does not say %q once:\n%s", code, want, page)
	}
}

// The retry form of a run that compensated offers the workflow's steps
// to redrive from, not the rows of its saga (~compensate,
// NAME~compensate), which the engine refuses as --from.
func TestRetryFromListsGraphStepsOnly(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	const sagaHCL = `workflow "sg" {
  version = "1.0.0"
  step "a" {
    exec { command = ["true"] }
    compensate {
      exec { command = ["true"] }
    }
  }
  step "b" {
    depends_on = [step.a]
    exec { command = ["sh", "-c", "exit 1"] }
  }
}
`
	mod, diags := lang.LoadSources([]lang.Source{{Name: "sg.hcl", Src: []byte(sagaHCL)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := s.door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	v, _, err := s.door.Start(ctx, api.StartRequest{Workflow: "sg"})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := s.eng.Drive(ctx, v.RunID); err != nil || run.Status != store.RunFailed {
		t.Fatalf("drive: %s, %v; want failed", run.Status, err)
	}
	b := s.browser()
	b.signIn(s.tokens[store.ScopeWrite])
	code, page := b.get("/runs/" + v.RunID)
	if code != http.StatusOK || !strings.Contains(page, `<option value="a">a</option>`) {
		t.Fatalf("run page (%d) offers no retry from a:\n%s", code, page)
	}
	if strings.Contains(page, `<option value="~compensate">`) || strings.Contains(page, `<option value="a~compensate">`) {
		t.Errorf("the retry form offers a saga's row:\n%s", page)
	}
}
