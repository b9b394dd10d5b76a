package crashtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// TestWorkerMetrics scrapes /metrics of a real worker (--metrics) after a
// mixed workload: three runs of a workflow whose exec and http steps
// complete, one whose exec fails twice (a retry) and fails the run. The
// counts are the workload's, the queue is empty at the end, and the
// exposition passes client_golang's lint and, when it is installed,
// promtool check metrics.
func TestWorkerMetrics(t *testing.T) {
	needBinary(t)
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "flowrun.db")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ok":true}`) }))
	defer srv.Close()
	okWF := filepath.Join(dir, "ok.hcl")
	badWF := filepath.Join(dir, "bad.hcl")
	write(t, okWF, `workflow "ok" {
  version = "1.0.0"
  input "url" { type = string }
  step "build" {
    exec { command = ["true"] }
  }
  step "notify" {
    depends_on = [step.build]
    http { url = "{{ input.url }}" }
  }
}
`)
	write(t, badWF, `workflow "bad" {
  version = "1.0.0"
  step "flaky" {
    retry {
      attempts = 2
      backoff  = "1ms"
    }
    exec { command = ["sh", "-c", "exit 3"] }
  }
}
`)
	for i := range 3 {
		if r := flowrun(t, nil, "--db", db, "apply", okWF, "--detach", "--new", "--input", "url="+srv.URL+"/"+strconv.Itoa(i)); r.code != 0 {
			t.Fatalf("apply ok.hcl exited %d; stderr:\n%s", r.code, r.stderr)
		}
	}
	if r := flowrun(t, nil, "--db", db, "apply", badWF, "--detach"); r.code != 0 {
		t.Fatalf("apply bad.hcl exited %d; stderr:\n%s", r.code, r.stderr)
	}

	w := start(t, "worker", nil, "--db", db, "worker", "--metrics", "127.0.0.1:0")
	var addr string
	addrRE := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
	if !waitLine(t, w, func(line string) bool {
		if m := addrRE.FindStringSubmatch(line); m != nil {
			addr = m[1]
			return true
		}
		return false
	}) {
		t.Fatalf("the worker ended before serving metrics; stderr:\n%s", w.stderr())
	}
	rdb := openReadOnly(t, db)
	deadline := wall.Now().Add(time.Minute)
	for {
		c := runStatusCounts(t, rdb)
		if c["completed"] == 3 && c["failed"] == 1 {
			break
		}
		if wall.Now().After(deadline) {
			t.Fatalf("the runs did not end in a minute: %v; worker stderr:\n%s", c, w.stderr())
		}
		sleep(20 * time.Millisecond)
	}

	body := scrape(t, "http://"+addr+"/metrics")
	for _, want := range []string{
		`flowrun_runs_started_total{workflow="ok"} 3`,
		`flowrun_runs_started_total{workflow="bad"} 1`,
		`flowrun_runs_finished_total{status="completed",workflow="ok"} 3`,
		`flowrun_runs_finished_total{status="failed",workflow="bad"} 1`,
		`flowrun_step_attempts_total{kind="exec",outcome="completed",step="build",workflow="ok"} 3`,
		`flowrun_step_attempts_total{kind="http",outcome="completed",step="notify",workflow="ok"} 3`,
		`flowrun_step_attempts_total{kind="exec",outcome="failed",step="flaky",workflow="bad"} 2`,
		`flowrun_step_attempt_duration_seconds_count{kind="http",step="notify",workflow="ok"} 3`,
		`flowrun_step_attempt_duration_seconds_count{kind="exec",step="flaky",workflow="bad"} 2`,
		`flowrun_due_runs 0`,
		`flowrun_oldest_due_run_age_seconds 0`,
		`flowrun_dead_letters_open 0`,
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("the scrape lacks %q", want)
		}
	}
	// Every run was claimed at least once; the failing one again after
	// its retry's backoff parked it.
	if n := metricValue(t, body, "flowrun_claims_total"); n < 4 {
		t.Errorf("flowrun_claims_total = %v, want at least 4", n)
	}
	if n := metricValue(t, body, `flowrun_store_commit_duration_seconds_count{result="ok"}`); n < 4 {
		t.Errorf("store commits counted = %v, want at least 4", n)
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil { // Debian's prometheus package; .ci/run installs it
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(strings.TrimPrefix(body, "\n"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", body)
	}
}

// scrape GETs url and returns the body.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return "\n" + b.String()
}

// metricValue is the value of the sample named exactly name (with its
// labels) in an exposition.
func metricValue(t *testing.T, body, name string) float64 {
	t.Helper()
	i := strings.Index(body, "\n"+name+" ")
	if i < 0 {
		t.Fatalf("the scrape lacks %s", name)
	}
	line := body[i+1:]
	line = line[:strings.IndexByte(line, '\n')]
	v, err := strconv.ParseFloat(strings.TrimPrefix(line, name+" "), 64)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return v
}

// write writes a file of the test.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
