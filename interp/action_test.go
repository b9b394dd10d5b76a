package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func TestExecArgvEnvAndJSON(t *testing.T) {
	b := setup(t)
	b.env["TOKEN"] = "s3cr3t-value"
	run := b.run(`
workflow "ex" {
  version = "1.0.0"
  secret "token" { env = "TOKEN" }
  step "argv" {
    # One argument with spaces and a semicolon: no shell splits it.
    exec { command = ["printf", "%s|", "a b; echo injected", "{{ 'x' }}"] }
  }
  step "shell" {
    exec {
      command = "echo \"$GREETING from $FLOWRUN_STEP attempt $FLOWRUN_ATTEMPT key $FLOWRUN_IDEMPOTENCY_KEY\" && echo err >&2"
      shell   = true
      env     = { GREETING = "hi" }
    }
  }
  step "json" {
    exec {
      command = ["cat"]
      stdin   = "{\"n\": 3, \"ok\": true}"
    }
  }
  step "secret" {
    exec {
      command = ["sh", "-c", "echo token=$T"]
      env     = { T = "{{ secrets.token }}" }
    }
  }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	wantJSON(t, "argv", v.Steps["argv"].Output, `{"exit_code": 0, "stdout": "a b; echo injected|x|", "stderr": "", "json": null}`)
	want := fmt.Sprintf("hi from shell attempt 1 key %s/shell\n", run.ID)
	wantJSON(t, "shell", v.Steps["shell"].Output, string(mustJSON(map[string]any{"exit_code": 0, "stdout": want, "stderr": "err\n", "json": nil})))
	wantJSON(t, "json", v.Steps["json"].Output, `{"exit_code": 0, "stdout": "{\"n\": 3, \"ok\": true}", "stderr": "", "json": {"n": 3, "ok": true}}`)
	// The secret reached the program but is redacted in what is stored.
	wantJSON(t, "secret", v.Steps["secret"].Output, `{"exit_code": 0, "stdout": "token=***\n", "stderr": "", "json": null}`)
	if a := b.attempts(run.ID, "shell"); len(a) != 1 || a[0].IdempotencyKey != run.ID+"/shell" || a[0].Owner == "" {
		t.Fatalf("attempts = %+v", a)
	}
}

// TestExecFindsProgramsOnPath: a program named without a slash is looked
// up on PATH, and the path found is used for a second (programCacheFor on
// the engine clock) without searching again: a program installed earlier
// on PATH is seen once that has passed, and a cached program that is gone
// is looked up again at once. A program that is nowhere fails the step,
// named.
func TestExecFindsProgramsOnPath(t *testing.T) {
	b := setup(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	t.Setenv("PATH", dirA+string(os.PathListSeparator)+dirB+string(os.PathListSeparator)+os.Getenv("PATH"))
	tool := func(dir, says string) string {
		p := filepath.Join(dir, "flowrun-test-tool")
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+says+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b.compile(`
workflow "tool" {
  version = "1.0.0"
  step "t" {
    exec { command = ["flowrun-test-tool"] }
  }
}
workflow "missing" {
  version = "1.0.0"
  step "t" {
    exec { command = ["flowrun-test-no-such-tool"] }
  }
}`)
	says := func(want string) {
		t.Helper()
		run := b.drive(b.start("tool", nil).ID)
		wantStatus(t, run, store.RunCompleted)
		wantJSON(t, "output", b.show(run.ID).Steps["t"].Output, `{"exit_code": 0, "stdout": "`+want+`\n", "stderr": "", "json": null}`)
	}
	tool(dirB, "B")
	says("B")
	inA := tool(dirA, "A")
	says("B") // found a moment ago
	b.clk.Advance(programCacheFor)
	says("A")
	if err := os.Remove(inA); err != nil {
		t.Fatal(err)
	}
	says("B") // the cached program is gone: looked up again

	run := b.drive(b.start("missing", nil).ID)
	wantStatus(t, run, store.RunFailed)
	v := b.show(run.ID)
	if k := errKind(t, v.Steps["t"].Error); k != "exec" {
		t.Fatalf("error kind = %q, want exec", k)
	}
	if msg := string(v.Steps["t"].Error); !strings.Contains(msg, "flowrun-test-no-such-tool") || !strings.Contains(msg, "not found") {
		t.Fatalf("error = %s, want it to name the program and say it was not found", msg)
	}
}

func TestExecFailureAndTruncation(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "ex" {
  version = "1.0.0"
  limits { output_bytes = 1024 }
  step "big" {
    exec { command = ["sh", "-c", "yes x | tr -d '\\n' | head -c 1030"] }
  }
  step "bad" {
    depends_on = [step.big]
    exec { command = ["sh", "-c", "echo first >&2; echo out of labels >&2; exit 3"] }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	v := b.show(run.ID)
	wantJSON(t, "big", v.Steps["big"].Output, `{"exit_code": 0, "stdout": "`+strings.Repeat("x", 1024)+`\n[flowrun: truncated 6 bytes]", "stderr": "", "json": null}`)
	var se stepError
	if err := json.Unmarshal(v.Steps["bad"].Error, &se); err != nil {
		t.Fatal(err)
	}
	if se.Kind != "exec" || se.ExitCode == nil || *se.ExitCode != 3 || se.Message != `command "sh" exited with status 3: out of labels` {
		t.Fatalf("bad error = %s", v.Steps["bad"].Error)
	}
	wantJSON(t, "run error", run.Error, `{"kind": "exec", "message": "command \"sh\" exited with status 3: out of labels", "step": "bad", "type": "urn:flowrun:error:exec"}`)
}

// TestExecReadsBothStreams: a program that writes much to stdout and
// stderr at once (more than a pipe holds, interleaved) has both captured
// whole, each in its own field.
func TestExecReadsBothStreams(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "both" {
  version = "1.0.0"
  step "loud" {
    exec {
      command = "i=0; while [ $i -lt 2000 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); done"
      shell   = true
    }
  }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	var out struct{ Stdout, Stderr string }
	if err := json.Unmarshal(b.show(run.ID).Steps["loud"].Output, &out); err != nil {
		t.Fatal(err)
	}
	var wantOut, wantErr strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&wantOut, "out-%d\n", i)
		fmt.Fprintf(&wantErr, "err-%d\n", i)
	}
	if out.Stdout != wantOut.String() || out.Stderr != wantErr.String() {
		t.Fatalf("stdout %d bytes, stderr %d bytes; want %d and %d, each in order", len(out.Stdout), len(out.Stderr), wantOut.Len(), wantErr.Len())
	}
}

// TestExecBackgroundProcessHoldsStdout: a program that exits while a
// process it started in the background keeps its stdout open ends with its
// own exit status and the output written before it exited, once the
// output's grace period (execWaitDelay) is over, instead of waiting for the
// background process.
func TestExecBackgroundProcessHoldsStdout(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	began := time.Now()
	run := b.run(fmt.Sprintf(`
workflow "bg" {
  version = "1.0.0"
  step "daemon" {
    exec {
      command = "echo started; sleep 60 & echo $! > %s"
      shell   = true
    }
  }
}`, pidFile), nil)
	took := time.Since(began)
	if raw, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "daemon", b.show(run.ID).Steps["daemon"].Output, `{"exit_code": 0, "stdout": "started\n", "stderr": "", "json": null}`)
	if took > 30*time.Second {
		t.Fatalf("the step took %s: it waited for the background process", took)
	}
}

// TestExecTimeoutKillsProcessGroup: the step's shell starts a grandchild
// sleep; on timeout (fake clock) the whole group dies.
func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	b.compile(fmt.Sprintf(`
workflow "to" {
  version = "1.0.0"
  step "slow" {
    timeout = "5s"
    exec {
      command = "sleep 300 & echo $! > %s; wait"
      shell   = true
    }
  }
}`, pidFile))
	run := b.start("to", nil)
	final := b.driveAdvancing(run.ID, b.clk, 5*time.Second, func() bool {
		raw, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(raw), "\n")
	})
	wantStatus(t, final, store.RunFailed)
	if k := errKind(t, final.Error); k != "timeout" {
		t.Fatalf("error = %s", final.Error)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file holds %q", raw)
	}
	// Killed with the group, it is gone once the kernel has run the kill
	// and it was reaped: 10 s is a safety net (it was 2 s).
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild sleep %d still alive after the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExecStopIsTermThenKill: a timed-out exec gets SIGTERM first (a
// program that traps it can clean up), and a program that ignores SIGTERM
// gets SIGKILL execKillGrace later on the engine clock.
func TestExecStopIsTermThenKill(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	ready, cleaned, ignored := filepath.Join(dir, "ready"), filepath.Join(dir, "cleaned"), filepath.Join(dir, "ignored")
	b.compile(fmt.Sprintf(`
workflow "term" {
  version = "1.0.0"
  step "polite" {
    timeout = "5s"
    exec {
      command = "trap 'echo bye > %[2]s; exit 7' TERM; touch %[1]s.polite; while :; do sleep 0.05; done"
      shell   = true
    }
  }
  step "stubborn" {
    timeout = "5s"
    exec {
      command = "trap '' TERM; touch %[1]s.stubborn; while :; do echo x > %[3]s; sleep 0.05; done"
      shell   = true
    }
  }
}`, ready, cleaned, ignored))
	run := b.start("term", nil)
	done := make(chan store.Run, 1)
	go func() {
		r, _ := b.e.Drive(b.ctx, run.ID)
		done <- r
	}()
	waitFile(t, ready+".polite")
	waitFile(t, ready+".stubborn")
	b.clk.Advance(5 * time.Second) // both time out: SIGTERM
	waitFile(t, cleaned)
	// The stubborn one goes on until the grace period ends on the clock.
	time.Sleep(200 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("the run ended (%s) before the stubborn step was killed", r.Status)
	default:
	}
	_ = os.Remove(ignored)
	waitFile(t, ignored) // still running after SIGTERM
	// The grace period's timer starts when SIGTERM is sent, in a goroutine
	// of its own: advance until the run ends, in case it was not set yet.
	var final store.Run
	for giveUp := time.Now().Add(20 * time.Second); ; {
		b.clk.Advance(execKillGrace)
		select {
		case final = <-done:
		case <-time.After(100 * time.Millisecond):
			if time.Now().After(giveUp) {
				t.Fatal("the stubborn step was not killed after the grace period")
			}
			continue
		}
		break
	}
	wantStatus(t, final, store.RunFailed)
	if k := errKind(t, final.Error); k != "timeout" {
		t.Fatalf("error = %s", final.Error)
	}
	// The polite program ran its trap: exit status 7, recorded on the
	// timed-out attempt.
	as := b.attempts(run.ID, "polite")
	var out struct {
		ExitCode float64 `json:"exit_code"`
	}
	if len(as) != 1 || json.Unmarshal(as[0].Output, &out) != nil || out.ExitCode != 7 {
		t.Errorf("polite attempts %+v, want one with exit_code 7", as)
	}
}

func TestHTTP(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Idempotency-Key")+" "+r.Header.Get("Content-Type")+" "+string(body))
		mu.Unlock()
		w.Header().Set("X-Thing", "one")
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			fmt.Fprint(w, `{"id": 7}`)
		case "/text":
			fmt.Fprint(w, "plain")
		default:
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error": "down"}`)
		}
	}))
	defer srv.Close()
	b := setup(t)
	run := b.run(`
workflow "h" {
  version = "1.0.0"
  input "base" { type = string }
  step "post" {
    http {
      method = "POST"
      url    = "{{ input.base }}/ok"
      body   = { order = "A-{{ 1 + 1 }}", n = 2 }
      expect = [201]
    }
  }
  step "text" {
    http {
      url  = "{{ input.base }}/text"
    }
  }
  step "down" {
    depends_on = [step.post, step.text]
    on_error = "continue"
    http {
      method = "PUT"
      url    = "{{ input.base }}/down"
      body   = "raw"
    }
  }
}`, map[string]any{"base": srv.URL})
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	out := jsonOf(t, v.Steps["post"].Output).(map[string]any)
	if out["status"] != 201.0 || fmt.Sprint(out["body"]) != "map[id:7]" || out["headers"].(map[string]any)["x-thing"] != "one" {
		t.Fatalf("post output = %s", v.Steps["post"].Output)
	}
	if body := jsonOf(t, v.Steps["text"].Output).(map[string]any)["body"]; body != "plain" {
		t.Fatalf("text body = %v", body)
	}
	var se stepError
	_ = json.Unmarshal(v.Steps["down"].Error, &se)
	if se.Kind != "http" || se.Status == nil || *se.Status != 503 {
		t.Fatalf("down error = %s", v.Steps["down"].Error)
	}
	if out, _ := jsonOf(t, v.Steps["down"].Output).(map[string]any); out == nil || out["status"] != 503.0 {
		t.Fatalf("down output = %s, want the failed response", v.Steps["down"].Output)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(seen, "\n")
	for _, w := range []string{
		"POST /ok " + run.ID + `/post application/json {"n":2,"order":"A-2"}`,
		"GET /text " + run.ID + "/text  ",
		"PUT /down " + run.ID + "/down text/plain; charset=utf-8 raw",
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("requests:\n%s\nwant a line %q", joined, w)
		}
	}
}

// failingCommit fails every transition that opens an attempt of key.
type failingCommit struct {
	store.Store
	key string
}

func (f *failingCommit) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	for _, t := range ts {
		for _, a := range t.Attempts {
			if a.StepKey == f.key && a.Status == store.AttemptRunning {
				return nil, errors.New("the disk is full")
			}
		}
	}
	return f.Store.TransitionCommit(ctx, ts)
}

// TestExecNeverRunsBeforeItsAttemptCommits: an exec whose process is
// prepared while its running write commits does not run when that commit
// fails; the run, driven again on a working store, runs it once.
func TestExecNeverRunsBeforeItsAttemptCommits(t *testing.T) {
	b := setup(t)
	marker := filepath.Join(t.TempDir(), "ran")
	b.compile(fmt.Sprintf(`
workflow "gated" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
  step "x" {
    depends_on = [step.a]
    exec { command = ["sh", "-c", "echo once >> %s"] }
  }
}`, marker))
	run := b.start("gated", nil)
	bad := New(&failingCommit{Store: b.st, key: "x"}, b.e.opts)
	if _, err := bad.Drive(b.ctx, run.ID); err == nil || !strings.Contains(err.Error(), "the disk is full") {
		t.Fatalf("Drive on a failing store: %v, want the store's error", err)
	}
	// Drive has returned, so the attempt's process, created while the
	// commit was made, has been killed and reaped: it can write nothing
	// from now on.
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the exec ran although its attempt never committed")
	}
	b.clk.Advance(time.Minute) // the failed engine's lease expires
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
	if raw, err := os.ReadFile(marker); err != nil || string(raw) != "once\n" {
		t.Fatalf("marker %q (%v), want one line", raw, err)
	}
}

// TestHTTPRequestPart: an http output's request part names the method,
// the URL after a redirect and the headers the last request carried, with
// the credential of Authorization and every header holding a secret
// redacted; a later step reads it; repeated response headers are joined.
func TestHTTPRequestPart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/final?page=2", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	b := setup(t)
	b.env["API_TOKEN"] = "tok-Q7x9"
	b.env["API_KEY"] = "key-W3v5"
	run := b.run(`
workflow "h" {
  version = "1.0.0"
  input "base" { type = string }
  secret "token" { env = "API_TOKEN" }
  secret "key" { env = "API_KEY" }
  step "post" {
    http {
      method  = "POST"
      url     = "{{ input.base }}/start"
      body    = "hello"
      headers = { x-key = "k={{ secrets.key }}", x-plain = "p", cookie = "session=abc" }
      auth { bearer = "{{ secrets.token }}" }
    }
  }
  step "after" {
    set {
      where  = "{{ steps.post.output.request.method }} {{ steps.post.output.request.url }}"
      multi  = "{{ steps.post.output.headers['x-multi'] }}"
    }
  }
}`, map[string]any{"base": srv.URL})
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	out := jsonOf(t, v.Steps["post"].Output).(map[string]any)
	req, _ := out["request"].(map[string]any)
	if req == nil {
		t.Fatalf("post output = %s, want a request part", v.Steps["post"].Output)
	}
	headers, _ := req["headers"].(map[string]any)
	for k, want := range map[string]string{
		"authorization":   "Bearer ***",
		"x-key":           "***",
		"x-plain":         "p",
		"cookie":          "***",
		"idempotency-key": run.ID + "/post",
		"content-type":    "text/plain; charset=utf-8",
	} {
		if headers[k] != want {
			t.Errorf("request header %s = %v, want %q (request %v)", k, headers[k], want, req)
		}
	}
	if req["method"] != "POST" || req["url"] != srv.URL+"/final?page=2" {
		t.Errorf("request = %v, want POST to the URL after the redirect", req)
	}
	after := jsonOf(t, v.Steps["after"].Output).(map[string]any)
	if after["where"] != "POST "+srv.URL+"/final?page=2" || after["multi"] != "a, b" {
		t.Errorf("after = %v", after)
	}
	wantNoLeak(t, b, run.ID, "tok-Q7x9", "key-W3v5")
}

// TestRunHTTPBytes: one http request allocates far less than the copy
// buffer io.Copy made for every response body (the client's and the
// server's own allocations included).
func TestRunHTTPBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	client := srv.Client()
	call := func() {
		c := &httpCall{method: "GET", url: srv.URL + "/x", headers: map[string]string{}, red: newRedactor(nil)}
		if _, se := runHTTP(context.Background(), client, c, 1<<20); se != nil {
			t.Fatal(se.Message)
		}
	}
	call() // the connection, kept alive
	var before, after runtime.MemStats
	const n = 50
	runtime.ReadMemStats(&before)
	for range n {
		call()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Errorf("an http request allocates %d bytes, want at most %d", per, 24<<10)
	}
	if testing.Verbose() {
		t.Logf("%d bytes per request", (after.TotalAlloc-before.TotalAlloc)/n)
	}
}

// TestSettleKeepsFreshOutputs: a step that completes in this process is
// settled with the value it was stored from: no step of a chain that
// reads each output decodes it again from its JSON.
func TestSettleKeepsFreshOutputs(t *testing.T) {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < 20; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	b.WriteString("}\n")
	e := setup(t)
	before := settleDecodes.Load()
	run := e.run(b.String(), nil)
	wantStatus(t, run, store.RunCompleted)
	if n := settleDecodes.Load() - before; n != 0 {
		t.Errorf("settle decoded %d outputs again, want none", n)
	}
	if out := jsonOf(t, e.show(run.ID).Steps["s19"].Output).(map[string]any); out["v"] != 19.0 {
		t.Errorf("s19 = %v, want v = 19", out)
	}
}
