package crashtest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowrun/flowrun/telemetry"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each export
// request with the OTLP protobuf package and keeps the spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	svc   map[string]bool // service.name of the resources seen
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "not a trace export", http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				o.svc[kv.GetValue().GetStringValue()] = true
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(out)
}

func (o *otlpReceiver) all() []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*tracepb.Span(nil), o.spans...)
}

// TestTraceAcrossKill: a worker exporting to an OTLP/HTTP receiver is
// SIGKILLed while an exec step runs; another worker process takes the
// run over and ends it. The receiver holds one trace, the run's (show
// --json's trace_id): its root span exported once, by the second worker;
// the killed attempt's span, an error "interrupted" from the second
// worker, with the span id its program saw in TRACEPARENT; the second
// attempt; the http step's span, whose id the server saw in the
// traceparent header; and the child run's root span, a child of the
// parent's root, with its own attempt under it. Worker 2's metrics count
// the reclaim and the interrupted attempt.
func TestTraceAcrossKill(t *testing.T) {
	needBinary(t)
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "flowrun.db")
	recv := &otlpReceiver{svc: map[string]bool{}}
	otlp := httptest.NewServer(recv)
	defer otlp.Close()
	var hmu sync.Mutex
	var headers []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hmu.Lock()
		headers = append(headers, r.Header.Get("Traceparent"))
		hmu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer api.Close()
	wf := filepath.Join(dir, "traced.hcl")
	write(t, wf, `workflow "kid" {
  version = "1.0.0"
  step "k" {
    exec { command = ["true"] }
  }
}

workflow "traced" {
  version = "1.0.0"
  input "url" { type = string }
  input "dir" { type = string }
  step "call" {
    http { url = "{{ input.url }}" }
  }
  step "slow" {
    depends_on = [step.call]
    exec {
      command = ["sh", "-c", "echo $TRACEPARENT > {{ input.dir }}/tp.$FLOWRUN_ATTEMPT; if [ $FLOWRUN_ATTEMPT = 1 ]; then touch {{ input.dir }}/started; sleep 60; fi"]
    }
  }
  step "child" {
    depends_on = [step.slow]
    workflow {
      name    = "kid"
      version = "1"
    }
  }
}
`)
	r := flowrun(t, nil, "--db", db, "apply", wf, "--workflow", "traced", "--detach", "--input", "url="+api.URL, "--input", "dir="+dir)
	if r.code != 0 {
		t.Fatalf("apply exited %d; stderr:\n%s", r.code, r.stderr)
	}
	runID := strings.TrimSpace(r.stdout)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=flowrun-crashtest"}

	w1 := start(t, "worker 1", env, "--db", db, "worker")
	started := filepath.Join(dir, "started")
	deadline := wall.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if w1.exited() || wall.Now().After(deadline) {
			t.Fatalf("the slow step did not start; worker 1 stderr:\n%s", w1.stderr())
		}
		sleep(10 * time.Millisecond)
	}
	if killed, _ := w1.kill(); !killed {
		t.Fatalf("worker 1 was not killed by SIGKILL; stderr:\n%s", w1.stderr())
	}

	w2 := start(t, "worker 2", env, "--db", db, "worker", "--metrics", "127.0.0.1:0")
	var metricsAddr string
	addrRE := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
	if !waitLine(t, w2, func(line string) bool {
		if m := addrRE.FindStringSubmatch(line); m != nil {
			metricsAddr = m[1]
			return true
		}
		return false
	}) {
		t.Fatalf("worker 2 ended before serving metrics; stderr:\n%s", w2.stderr())
	}
	rdb := openReadOnly(t, db)
	for {
		c := runStatusCounts(t, rdb)
		if c["completed"] == 2 {
			break
		}
		if c["failed"] > 0 || wall.Now().After(deadline) {
			t.Fatalf("the runs did not complete: %v; worker 2 stderr:\n%s", c, w2.stderr())
		}
		sleep(20 * time.Millisecond)
	}
	// Worker 2 counted the reclaim and the killed attempt.
	body := scrape(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{
		`flowrun_lease_reclaims_total{workflow="traced"} 1`,
		`flowrun_step_attempts_total{kind="exec",outcome="interrupted",step="slow",workflow="traced"} 1`,
		`flowrun_step_attempts_total{kind="exec",outcome="completed",step="slow",workflow="traced"} 1`,
		`flowrun_runs_finished_total{status="completed",workflow="traced"} 1`,
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("worker 2's metrics lack %q", want)
		}
	}
	if strings.Contains(body, `flowrun_runs_started_total{workflow="traced"}`) {
		t.Errorf("worker 2 counted the run as started; worker 1 started it")
	}
	_ = w2.cmd.Process.Signal(syscall.SIGTERM) // drains, then flushes its spans
	<-w2.done
	if w2.exitCode() != 0 {
		t.Fatalf("worker 2 exited %d; stderr:\n%s", w2.exitCode(), w2.stderr())
	}

	show := flowrun(t, nil, "--db", db, "show", runID, "--json")
	var view struct {
		TraceID string `json:"trace_id"`
		Steps   map[string]struct {
			ChildRunID string `json:"child_run_id"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &view); err != nil || len(view.TraceID) != 32 {
		t.Fatalf("show --json: %v, trace_id %q:\n%s", err, view.TraceID, show.stdout)
	}
	childID := view.Steps["child"].ChildRunID
	root := telemetry.NewTrace(runID)
	if root.TraceID != view.TraceID {
		t.Fatalf("show's trace_id %s, want %s", view.TraceID, root.TraceID)
	}
	kid := telemetry.ChildTrace(root, childID)

	spans := recv.all()
	byID := map[string][]*tracepb.Span{}
	for _, s := range spans {
		if tid := hex.EncodeToString(s.TraceId); tid != root.TraceID {
			t.Errorf("span %q is in trace %s, want the run's %s", s.Name, tid, root.TraceID)
		}
		id := hex.EncodeToString(s.SpanId)
		byID[id] = append(byID[id], s)
	}
	one := func(what, id, parent string) *tracepb.Span {
		t.Helper()
		got := byID[id]
		if len(got) != 1 {
			t.Errorf("%s: %d spans with id %s, want exactly 1 (spans: %s)", what, len(got), id, names(spans))
			return nil
		}
		if p := hex.EncodeToString(got[0].ParentSpanId); p != parent {
			t.Errorf("%s: parent %q, want %q", what, p, parent)
		}
		return got[0]
	}
	if s := one("the run's root span", root.SpanID, ""); s != nil && (s.Name != "run traced" || s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR) {
		t.Errorf("root span %q status %v", s.Name, s.Status)
	}
	tp1 := readTrim(t, filepath.Join(dir, "tp.1"))
	a1 := telemetry.AttemptSpanID(runID, "slow", 1)
	if want := telemetry.Traceparent(root.TraceID, a1); tp1 != want {
		t.Errorf("the killed attempt's TRACEPARENT = %q, want %q", tp1, want)
	}
	if s := one("the killed attempt (from worker 2)", a1, root.SpanID); s != nil &&
		(s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || s.Status.GetMessage() != "interrupted" || s.Name != "step slow") {
		t.Errorf("killed attempt span %q status %v, want an error 'interrupted'", s.Name, s.Status)
	}
	a2 := telemetry.AttemptSpanID(runID, "slow", 2)
	if tp2 := readTrim(t, filepath.Join(dir, "tp.2")); tp2 != telemetry.Traceparent(root.TraceID, a2) {
		t.Errorf("the second attempt's TRACEPARENT = %q, want its span %s", tp2, a2)
	}
	if s := one("the second attempt", a2, root.SpanID); s != nil && s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("second attempt span status %v", s.Status)
	}
	call := telemetry.AttemptSpanID(runID, "call", 1)
	hmu.Lock()
	if len(headers) != 1 || headers[0] != telemetry.Traceparent(root.TraceID, call) {
		t.Errorf("the http server saw traceparent %q, want [%s]", headers, telemetry.Traceparent(root.TraceID, call))
	}
	hmu.Unlock()
	// The http attempt ended before the kill: worker 1 exported its span
	// (within OTEL_BSP_SCHEDULE_DELAY) unless the kill came first.
	if got := byID[call]; len(got) > 1 || len(got) == 1 && hex.EncodeToString(got[0].ParentSpanId) != root.SpanID {
		t.Errorf("the http attempt's span: %d spans, parent %x", len(got), got[0].ParentSpanId)
	}
	one("the child run's root span", kid.SpanID, root.SpanID)
	one("the child's attempt", telemetry.AttemptSpanID(childID, "k", 1), kid.SpanID)
	if !recv.svc["flowrun-crashtest"] {
		t.Errorf("no span came with service.name flowrun-crashtest (OTEL_SERVICE_NAME): %v", recv.svc)
	}
	if t.Failed() {
		t.Logf("spans: %s\nworker 2 stderr:\n%s", names(spans), w2.stderr())
	}
}

func names(spans []*tracepb.Span) string {
	var b bytes.Buffer
	for _, s := range spans {
		b.WriteString("\n  " + s.Name + " " + hex.EncodeToString(s.SpanId) + " parent " + hex.EncodeToString(s.ParentSpanId) + " " + s.Status.GetMessage())
	}
	return b.String()
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestTraceApply: apply working on a run in the foreground exports its
// trace too (the root span and the attempt's, with the TRACEPARENT its
// program saw), flushed before apply exits.
func TestTraceApply(t *testing.T) {
	needBinary(t)
	t.Parallel()
	dir := t.TempDir()
	recv := &otlpReceiver{svc: map[string]bool{}}
	otlp := httptest.NewServer(recv)
	defer otlp.Close()
	wf := filepath.Join(dir, "fg.hcl")
	write(t, wf, `workflow "fg" {
  version = "1.0.0"
  step "one" {
    exec { command = ["sh", "-c", "echo $TRACEPARENT"] }
  }
}
`)
	db := filepath.Join(dir, "flowrun.db")
	r := flowrun(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL}, "--db", db, "apply", wf, "--json")
	if r.code != 0 {
		t.Fatalf("apply exited %d; stderr:\n%s", r.code, r.stderr)
	}
	var view struct {
		RunID   string `json:"run_id"`
		TraceID string `json:"trace_id"`
		Steps   map[string]struct {
			Output struct {
				Stdout string `json:"stdout"`
			} `json:"output"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &view); err != nil {
		t.Fatalf("apply --json: %v\n%s", err, r.stdout)
	}
	root := telemetry.NewTrace(view.RunID)
	att := telemetry.AttemptSpanID(view.RunID, "one", 1)
	if got, want := strings.TrimSpace(view.Steps["one"].Output.Stdout), telemetry.Traceparent(root.TraceID, att); got != want || view.TraceID != root.TraceID {
		t.Errorf("TRACEPARENT %q, trace_id %q; want %q in trace %s", got, view.TraceID, want, root.TraceID)
	}
	got := map[string]string{}
	for _, s := range recv.all() {
		got[hex.EncodeToString(s.SpanId)] = hex.EncodeToString(s.ParentSpanId)
	}
	if p, ok := got[root.SpanID]; !ok || p != "" {
		t.Errorf("no root span %s (spans: %v)", root.SpanID, got)
	}
	if p, ok := got[att]; !ok || p != root.SpanID {
		t.Errorf("no attempt span %s under the root (spans: %v)", att, got)
	}
}
