package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The web dashboard through the real flowrun serve and a real browser
// (Debian's chromium, headless; .ci/run installs it): sign-in with a read
// token shows no action; with a write token a run started through the API
// turns green step by step without a reload, a step's output that holds
// markup and an escape sequence is shown as text and runs no script, the
// signal's form generated from its type refuses a field of the wrong type
// and sends a right one, a run parked on 1.0.0 takes the version decision (with
// the changes) after 2.0.0 is applied, a run is canceled, a dead letter
// is redriven, and the search box takes a key and the CLI's run
// references.

const browserFlowV1 = `workflow "flow" {
  version = "1.0.0"
  input "id" { type = string }
  key = "input.id"
  step "one" {
    exec { command = ["sh", "-c", "echo '<img src=x onerror=alert(1)>'; printf '\\033[31mred\\033[0m\\n'; echo first; sleep 3; echo second; sleep 1"] }
  }
  step "two" {
    depends_on = [step.one]
    exec { command = ["sh", "-c", "sleep 2; echo two"] }
  }
  step "ask" {
    depends_on = [step.two]
    wait {
      signal = "approval"
      type   = object({ ok = bool, count = number })
    }
  }
  step "done" {
    depends_on = [step.ask]
    set { v = "v1" }
  }
}
`

// browserFlowV2 changes "done" in a way that needs a MAJOR.
const browserFlowV2 = `workflow "flow" {
  version = "2.0.0"
  input "id" { type = string }
  key = "input.id"
  step "one" {
    exec { command = ["sh", "-c", "echo '<img src=x onerror=alert(1)>'; printf '\\033[31mred\\033[0m\\n'; echo first; sleep 3; echo second; sleep 1"] }
  }
  step "two" {
    depends_on = [step.one]
    exec { command = ["sh", "-c", "sleep 2; echo two"] }
  }
  step "ask" {
    depends_on = [step.two]
    wait {
      signal = "approval"
      type   = object({ ok = bool, count = number })
    }
  }
  step "done" {
    set { v = "v2" }
  }
}
`

// browserDeadLetters fails each item once (a file marks its first try),
// so its dead letters, redriven, succeed.
const browserDeadLetters = `workflow "dl" {
  version = "1.0.0"
  step "each" {
    foreach {
      items      = "[1, 2]"
      on_failure = "dead_letter"
    }
    exec { command = ["sh", "-c", "test -e tried-{{ item }} || { touch tried-{{ item }}; exit 1; }"] }
  }
}
`

// browserCase is a browser test's world: a store, the real flowrun serve
// on it with a worker, and a headless browser.
type browserCase struct {
	t       *testing.T
	dir     string
	flowrun string
	url     string
	tokens  map[string]string
	ctx     context.Context
	dialogs atomic.Int32
}

func newBrowserCase(t *testing.T) *browserCase {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser tests are skipped under -short")
	}
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; the browser tests need it (apt-get install chromium; .ci/run installs it)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	b := &browserCase{t: t, dir: t.TempDir(), flowrun: filepath.Join(bin, "flowrun"), tokens: map[string]string{}}
	if err := os.Symlink(self, b.flowrun); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "flow.hcl"), []byte(browserFlowV1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "dl.hcl"), []byte(browserDeadLetters), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(b.dir, "v2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "v2", "flow.hcl"), []byte(browserFlowV2), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"read", "write"} {
		b.tokens[sc] = strings.TrimSpace(b.run("tokens", "create", sc+"er", "--scope", sc))
	}
	addr := filepath.Join(b.dir, "addr")
	srv := exec.Command(b.flowrun, "serve", "--listen", "127.0.0.1:0", "--addr-file", addr, "--worker", "2")
	srv.Dir, srv.Env = b.dir, b.env()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGINT)
		_ = srv.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); b.url == ""; time.Sleep(10 * time.Millisecond) {
		if a, err := os.ReadFile(addr); err == nil && strings.HasSuffix(string(a), "\n") {
			b.url = "http://" + strings.TrimSpace(string(a))
		} else if time.Now().After(deadline) {
			t.Fatal("flowrun serve wrote no address in 30s")
		}
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.Headless, chromedp.Flag("disable-gpu", true))...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(alloc)
	t.Cleanup(cancel2)
	// A safety net against a hung browser, never a timing assumption.
	ctx, cancel3 := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel3)
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Errorf("a page threw: %s", e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				t.Errorf("a page wrote to the console (%s): %s", e.Type, strings.Join(args, " "))
			}
		}
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.dialogs.Add(1)
			go func() { // the dialog is dismissed so the page goes on; joined by the test's end
				_ = chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
			}()
			t.Errorf("a page opened a JavaScript dialog: %q", d.Message)
		}
	})
	b.ctx = ctx
	return b
}

func (b *browserCase) env() []string {
	return append(os.Environ(), "NO_COLOR=1", "FLOWRUN_DB="+filepath.Join(b.dir, ".flowrun", "flowrun.db"))
}

// run runs flowrun in the test's directory and returns its stdout; exit
// codes 0 and 3 (parked) are expected.
func (b *browserCase) run(args ...string) string {
	b.t.Helper()
	cmd := exec.Command(b.flowrun, args...)
	cmd.Dir, cmd.Env = b.dir, b.env()
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		err = nil
	}
	if err != nil {
		b.t.Fatalf("flowrun %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start starts a run through the API and returns its id.
func (b *browserCase) start(id string) string {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.url+"/v1/workflows/flow/runs", strings.NewReader(`{"inputs": {"id": "`+id+`"}}`))
	req.Header.Set("Authorization", "Bearer "+b.tokens["write"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		RunID string `json:"run_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusCreated {
		b.t.Fatalf("start %s: %d %v", id, resp.StatusCode, err)
	}
	return v.RunID
}

// do runs browser actions.
func (b *browserCase) do(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		var loc, body string
		_ = chromedp.Run(b.ctx, chromedp.Location(&loc), chromedp.Text("main", &body, chromedp.ByQuery))
		b.t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
	}
}

// eval evaluates a JavaScript expression on the page.
func (b *browserCase) eval(expr string, out any) {
	b.t.Helper()
	b.do("evaluating "+expr, chromedp.Evaluate(expr, out))
}

// until polls a JavaScript condition on the page; a page that reloads
// meanwhile (a run's page does when the run ends) is read again. The 60s
// limit is a safety net against a hung test, never a timing assumption.
func (b *browserCase) until(what, cond string) {
	b.t.Helper()
	b.untilIn(b.ctx, what, cond)
}

// untilIn is until in the browser tab of ctx.
func (b *browserCase) untilIn(ctx context.Context, what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ok bool
		err := chromedp.Run(ctx, chromedp.Evaluate("Boolean("+cond+")", &ok))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var body string
			_ = chromedp.Run(ctx, chromedp.Text("main", &body, chromedp.ByQuery))
			b.t.Fatalf("waiting for %s: %v (last error %v)\n%s", what, cond, err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signIn signs in with a token of scope and lands on the runs page.
func (b *browserCase) signIn(scope string) {
	b.t.Helper()
	b.do("signing in with the "+scope+" token",
		chromedp.Navigate(b.url+"/login"),
		chromedp.SendKeys(`input[name=token]`, b.tokens[scope], chromedp.ByQuery),
		chromedp.Submit(`form.login`, chromedp.ByQuery),
		chromedp.WaitVisible(`table#runs`, chromedp.ByQuery))
}

func (b *browserCase) text(sel string) string {
	b.t.Helper()
	var s string
	b.do("reading "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

func TestBrowserDashboard(t *testing.T) {
	b := newBrowserCase(t)
	first := strings.TrimSpace(b.run("apply", "flow.hcl", "--detach", "--input", "id=first"))

	// A read token: the runs, and no action anywhere.
	b.signIn("read")
	b.do("opening the first run", chromedp.Navigate(b.url+"/runs/"+first), chromedp.WaitVisible(`#graph`, chromedp.ByQuery))
	var actions int
	b.eval(`document.querySelectorAll('a[href*="/confirm/"], form.signal, form[action^="/ops/"]').length`, &actions)
	if actions != 0 {
		t.Fatalf("a read token's page shows %d actions", actions)
	}
	b.do("signing out", chromedp.Click(`form.who button`, chromedp.ByQuery), chromedp.WaitVisible(`form.login`, chromedp.ByQuery))

	// A write token; a run started through the API, followed live: its
	// graph turns green step by step on the page as it was loaded.
	b.signIn("write")
	live := b.start("live")

	// Step one's output, followed on its page in a tab of its own while
	// the step runs: its first line shows before its second is written.
	tab, closeTab := chromedp.NewContext(b.ctx)
	if err := chromedp.Run(tab, chromedp.Navigate(b.url+"/runs/"+live+"/steps/one"), chromedp.WaitVisible(`#output`, chromedp.ByQuery)); err != nil {
		t.Fatalf("opening step one while it runs: %v", err)
	}
	b.untilIn(tab, "step one's first line", `document.querySelector('#output').textContent.includes('first')`)
	var early string
	if err := chromedp.Run(tab, chromedp.Text(`#output`, &early, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(early, "second") {
		t.Fatalf("step one's output was whole when its page first showed it (%q): the page did not follow it as it ran", early)
	}
	b.untilIn(tab, "step one's second line", `document.querySelector('#output').textContent.includes('second')`)
	closeTab()
	b.do("opening the live run", chromedp.Navigate(b.url+"/runs/"+live), chromedp.WaitVisible(`[data-step="two"]`, chromedp.ByQuery))
	var twoDone bool
	b.eval(`document.querySelector('[data-step="two"]').classList.contains('st-completed')`, &twoDone)
	if twoDone {
		t.Fatal("step two of the live run was completed before its page loaded; the page cannot show it turn green")
	}
	b.eval(`window.flowrunMark = 1`, nil)
	b.until("step one green", `document.querySelector('[data-step="one"]').classList.contains('st-completed')`)
	b.until("step two green", `document.querySelector('[data-step="two"]').classList.contains('st-completed')`)
	b.until("step ask waiting", `document.querySelector('[data-step="ask"]').classList.contains('st-waiting')`)
	var mark int
	b.eval(`window.flowrunMark || 0`, &mark)
	if mark != 1 {
		t.Fatal("the run's page was reloaded while the run went on; it must follow the run in place")
	}
	if got := b.text(`#run-status`); !strings.Contains(got, "waiting") {
		t.Fatalf("the run's status on the page: %q", got)
	}

	// The step's output holds markup and an escape sequence: text on the
	// page, no image element, no dialog.
	b.do("opening step one", chromedp.Navigate(b.url+"/runs/"+live+"/steps/one"), chromedp.WaitVisible(`#output`, chromedp.ByQuery))
	b.until("the live output", `document.querySelector('#output').textContent.includes('onerror=alert(1)')`)
	out := b.text(`#output`)
	if !strings.Contains(out, "<img src=x onerror=alert(1)>") || !strings.Contains(out, `\x1b[31mred`) {
		t.Fatalf("the step's live output is not shown as text: %q", out)
	}
	var images int
	b.eval(`document.images.length`, &images)
	if images != 0 {
		t.Fatalf("the step's output became %d image elements", images)
	}

	// Its signal through the form generated from the wait's type (one
	// input per field): a count that is not a number is refused on the
	// page, a right one is sent and the run completes.
	send := func(count string) {
		b.do("sending count "+count,
			chromedp.Navigate(b.url+"/runs/"+live),
			chromedp.WaitVisible(`form.signal input[name="f.count"]`, chromedp.ByQuery),
			chromedp.Click(`form.signal input[name="f.ok"]`, chromedp.ByQuery),
			chromedp.SendKeys(`form.signal input[name="f.count"]`, count, chromedp.ByQuery),
			chromedp.Submit(`form.signal`, chromedp.ByQuery),
			chromedp.WaitVisible(`p.problem, button.confirm`, chromedp.ByQuery))
	}
	send("many")
	if got := b.text(`main`); !strings.Contains(got, "Field count must be a number") {
		t.Fatalf("a count that is not a number: %q", got)
	}
	send("2")
	if got := b.text(`main`); !strings.Contains(got, `{"count":2,"ok":true}`) {
		t.Fatalf("the confirm page of the signal: %q", got)
	}
	b.do("confirming the signal", chromedp.Click(`button.confirm`, chromedp.ByQuery), chromedp.WaitVisible(`p.done`, chromedp.ByQuery))
	if got := b.text(`main`); !strings.Contains(got, "Signal approval sent to run "+live) {
		t.Fatalf("after the signal: %q", got)
	}
	b.until("the run completed", `document.querySelector('[data-step="done"]') && document.querySelector('[data-step="done"]').classList.contains('st-completed')`)

	// A new MAJOR: the first run, parked on 1.0.0, takes the version
	// decision on its page, with the changes; migrate moves it.
	b.do("waiting for the first run to park", chromedp.Navigate(b.url+"/runs/"+first))
	b.until("the first run waiting", `document.querySelector('[data-step="ask"]').classList.contains('st-waiting')`)
	b.run("apply", "v2/flow.hcl", "--detach", "--input", "id=second")
	b.do("opening the first run again", chromedp.Navigate(b.url+"/runs/"+first), chromedp.WaitVisible(`#decide`, chromedp.ByQuery))
	if got := b.text(`#decide`); !strings.Contains(got, "Changes from 1.0.0 to 2.0.0 (MAJOR)") || !strings.Contains(got, `step "done"`) {
		t.Fatalf("the decision section: %q", got)
	}
	var marked []string
	b.eval(`Array.from(document.querySelectorAll('#decide .sides .is-changed strong')).map(e => e.textContent)`, &marked)
	if len(marked) != 2 || marked[0] != "done" || marked[1] != "done" {
		t.Fatalf("the two graphs side by side mark %v as changed, want done in each", marked)
	}
	b.do("migrating",
		chromedp.Click(`a[href*="choose=migrate"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`button.confirm`, chromedp.ByQuery),
		chromedp.Click(`button.confirm`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.done`, chromedp.ByQuery))
	if got := b.text(`p.done`); !strings.Contains(got, "decided migrate") {
		t.Fatalf("after the decision: %q", got)
	}
	if got := b.run("show", first, "--json"); !strings.Contains(got, `"version": "2.0.0"`) {
		t.Fatalf("the first run after the decision:\n%s", got)
	}

	// Cancel a run.
	gone := b.start("gone")
	b.do("canceling",
		chromedp.Navigate(b.url+"/runs/"+gone),
		chromedp.Click(`a[href$="/confirm/cancel"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`button.confirm`, chromedp.ByQuery),
		chromedp.Click(`button.confirm`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.done`, chromedp.ByQuery))
	b.until("the run canceled", `document.querySelector('#run-status').textContent.includes('cancel')`)

	// A dead letter, redriven from the operations page, closes.
	b.run("apply", "dl.hcl", "--detach")
	b.do("opening the operations page", chromedp.Navigate(b.url+"/ops"))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var n int
		b.do("counting dead letters", chromedp.Navigate(b.url+"/ops"), chromedp.WaitVisible(`main h1`, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('a[href$="/confirm/retry"]').length`, &n))
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operations page shows %d dead letters to redrive, want 2", n)
		}
	}
	b.do("redriving a dead letter",
		chromedp.Click(`a[href$="/confirm/retry"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`button.confirm`, chromedp.ByQuery),
		chromedp.Click(`button.confirm`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.done`, chromedp.ByQuery))
	if got := b.text(`p.done`); !strings.Contains(got, "was run again and closed") {
		t.Fatalf("after the redrive: %q", got)
	}
	var left int
	b.eval(`document.querySelectorAll('a[href$="/confirm/retry"]').length`, &left)
	if left != 1 {
		t.Fatalf("%d dead letters are still open after one was redriven, want 1", left)
	}

	// The search box: a key lists its runs; a run reference opens it.
	b.do("searching a key",
		chromedp.Navigate(b.url+"/runs"),
		chromedp.SetValue(`input[name=q]`, "live", chromedp.ByQuery),
		chromedp.Submit(`form.filters`, chromedp.ByQuery),
		chromedp.WaitVisible(`table#runs`, chromedp.ByQuery))
	if got := b.text(`table#runs tbody`); !strings.Contains(got, live) || strings.Contains(got, first) {
		t.Fatalf("the search for key live lists: %q", got)
	}
	var loc string
	b.do("searching @last",
		chromedp.SetValue(`input[name=q]`, "flow@last", chromedp.ByQuery),
		chromedp.Submit(`form.filters`, chromedp.ByQuery),
		chromedp.WaitVisible(`#graph`, chromedp.ByQuery),
		chromedp.Location(&loc))
	if !strings.HasSuffix(loc, "/runs/"+gone) && !strings.Contains(loc, "/runs/") {
		t.Fatalf("flow@last opened %s", loc)
	}
	// The keyboard alone: from the search box, Tab reaches the filters
	// and then the first run's link, and Enter opens it.
	b.do("opening the runs page", chromedp.Navigate(b.url+"/runs"), chromedp.WaitVisible(`table#runs`, chromedp.ByQuery))
	var firstLink string
	b.eval(`document.querySelector('table#runs tbody a').getAttribute('href')`, &firstLink)
	b.do("focusing the search box", chromedp.Focus(`input[name=q]`, chromedp.ByQuery))
	reached := false
	for range 30 {
		var href string
		b.do("pressing Tab", chromedp.KeyEvent("\t"), chromedp.Evaluate(`document.activeElement.getAttribute('href') || ''`, &href))
		if href == firstLink {
			reached = true
			break
		}
	}
	if !reached {
		t.Fatal("Tab never reached the first run's link on the runs page")
	}
	b.do("pressing Enter", chromedp.KeyEvent("\r"), chromedp.WaitVisible(`#graph`, chromedp.ByQuery), chromedp.Location(&loc))
	if !strings.HasSuffix(loc, firstLink) {
		t.Fatalf("Enter on the first run's link opened %s, want %s", loc, firstLink)
	}

	// A phone's width: the runs page and a run's page fit, with no
	// sideways scrolling of the page.
	b.do("narrowing the window to a phone's", emulation.SetDeviceMetricsOverride(390, 844, 3, true))
	for _, p := range []string{"/runs", "/runs/" + live, "/runs/" + live + "/steps/one", "/ops"} {
		var wide bool
		b.do("opening "+p+" on a phone", chromedp.Navigate(b.url+p), chromedp.WaitVisible(`main`, chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`, &wide))
		if wide {
			t.Errorf("%s is wider than a phone's screen", p)
		}
	}
	if n := b.dialogs.Load(); n != 0 {
		t.Fatalf("%d JavaScript dialogs opened", n)
	}
}
