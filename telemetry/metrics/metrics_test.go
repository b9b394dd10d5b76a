package metrics

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/telemetry"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// sample returns metrics that saw one of everything, and what a scrape of
// them serves.
func sample(t *testing.T, read func(context.Context) (Snapshot, error)) (*Metrics, []byte) {
	t.Helper()
	m := New(Options{Now: func() time.Time { return t0.Add(time.Minute) }, Read: read})
	run := telemetry.Run{ID: "r1", Workflow: "deploy", Status: "running"}
	m.RunStarted(run)
	m.Claimed(3)
	m.Reclaimed("deploy")
	m.AttemptEnded(telemetry.Attempt{Run: run, Step: "build", Kind: "exec", Status: "failed", Started: t0, Finished: t0.Add(1500 * time.Millisecond)})
	m.AttemptEnded(telemetry.Attempt{Run: run, Step: "build", Kind: "exec", Status: "completed", Started: t0, Finished: t0.Add(20 * time.Millisecond)})
	m.AttemptEnded(telemetry.Attempt{Run: run, Step: "notify", Kind: "http", Status: "interrupted", Started: t0, Finished: t0.Add(time.Second)})
	run.Status = "completed"
	m.RunEnded(run)
	m.Committed(2*time.Millisecond, false)
	m.ScheduleFired("deploy", 300*time.Millisecond)
	m.LeaseLost(telemetry.LeaseLoss{Run: telemetry.Run{ID: "r1", Workflow: "deploy"}, TakenBy: "h/2/w1"})
	m.RunsPruned("deploy", 3)
	m.RunsPruned("deploy", 2)
	m.StoreFailing(errors.New("down"))
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return m, rec.Body.Bytes()
}

func okRead(context.Context) (Snapshot, error) {
	return Snapshot{Due: 4, OldestDue: t0, Breakers: map[string]string{"payments": "open", "mail": "closed"}, OpenDeadLetters: 2, LiveWorkers: 3}, nil
}

// TestMetricsLint runs client_golang's linter over a scrape: names,
// suffixes, units and help texts follow Prometheus conventions.
func TestMetricsLint(t *testing.T) {
	_, body := sample(t, okRead)
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestMetricsPromtool runs `promtool check metrics` (Debian's prometheus
// package) over a scrape when promtool is installed.
func TestMetricsPromtool(t *testing.T) {
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus)")
	}
	_, body := sample(t, okRead)
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsValues checks what each observation and the store read give.
func TestMetricsValues(t *testing.T) {
	m, body := sample(t, okRead)
	for _, c := range []struct {
		what string
		got  float64
		want float64
	}{
		{"runs started", testutil.ToFloat64(m.runsStarted.WithLabelValues("deploy")), 1},
		{"runs finished completed", testutil.ToFloat64(m.runsFinished.WithLabelValues("deploy", "completed")), 1},
		{"build failed", testutil.ToFloat64(m.attempts.WithLabelValues("deploy", "build", "exec", "failed")), 1},
		{"build completed", testutil.ToFloat64(m.attempts.WithLabelValues("deploy", "build", "exec", "completed")), 1},
		{"notify interrupted", testutil.ToFloat64(m.attempts.WithLabelValues("deploy", "notify", "http", "interrupted")), 1},
		{"claims", testutil.ToFloat64(m.claims), 3},
		{"reclaims", testutil.ToFloat64(m.reclaims.WithLabelValues("deploy")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	text := string(body)
	for _, want := range []string{
		`flowrun_step_attempt_duration_seconds_count{kind="exec",step="build",workflow="deploy"} 2`,
		`flowrun_step_attempt_duration_seconds_sum{kind="exec",step="build",workflow="deploy"} 1.52`,
		`flowrun_step_attempt_duration_seconds_bucket{kind="exec",step="build",workflow="deploy",le="0.025"} 1`,
		`flowrun_due_runs 4`,
		`flowrun_oldest_due_run_age_seconds 60`,
		`flowrun_breaker_state{breaker="payments",state="open"} 1`,
		`flowrun_breaker_state{breaker="payments",state="closed"} 0`,
		`flowrun_breaker_state{breaker="mail",state="closed"} 1`,
		`flowrun_dead_letters_open 2`,
		`flowrun_workers_live 3`,
		`flowrun_store_commit_duration_seconds_count{result="ok"} 1`,
		`flowrun_schedule_fire_lag_seconds_count{workflow="deploy"} 1`,
		`flowrun_metrics_store_read_errors_total 0`,
		`flowrun_lease_losses_total{workflow="deploy"} 1`,
		`flowrun_runs_pruned_total{workflow="deploy"} 5`,
		`flowrun_store_failing 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape lacks %q", want)
		}
	}
}

// TestMetricsReadFails: a failing store read leaves its figures out of
// the scrape and counts the failure; the rest is served.
func TestMetricsReadFails(t *testing.T) {
	// The read fails after a while, as one the database gives up on does,
	// so the rest of the scrape has been collected by then.
	m, body := sample(t, func(context.Context) (Snapshot, error) {
		time.Sleep(50 * time.Millisecond)
		return Snapshot{}, errors.New("database is locked")
	})
	text := string(body)
	if strings.Contains(text, "flowrun_due_runs ") {
		t.Errorf("a failed read still served flowrun_due_runs")
	}
	if !strings.Contains(text, "flowrun_claims_total 3\n") {
		t.Errorf("the scrape lacks the claims")
	}
	// The scrape whose read failed counts it (its collectors run
	// concurrently: the count is served by the one that reads).
	if !strings.Contains(text, "flowrun_metrics_store_read_errors_total 1\n") {
		t.Errorf("the scrape whose read failed does not count it:\n%s", text)
	}
	if n := testutil.ToFloat64(m.readErrors); n != 1 {
		t.Errorf("read errors = %v, want 1", n)
	}
}
