package interp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	wantJSON(t, "run error", run.Error, `{"kind": "exec", "message": "command \"sh\" exited with status 3: out of labels", "step": "bad"}`)
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
	done := make(chan store.Run)
	go func() {
		r, _ := b.e.Drive(b.ctx, run.ID)
		done <- r
	}()
	var final store.Run
	deadline := time.Now().Add(20 * time.Second)
wait:
	for {
		select {
		case final = <-done:
			break wait
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the timed-out step was not stopped")
		}
		if raw, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(raw), "\n") {
			b.clk.Advance(5 * time.Second)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	for i := 0; ; i++ {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			break
		}
		if i > 200 {
			t.Fatalf("grandchild sleep %d still alive after the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
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
