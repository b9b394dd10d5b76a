package tracing

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/telemetry"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// recorder collects what a batcher exports, batch by batch.
type recorder struct {
	mu      sync.Mutex
	batches [][]*spanData
}

func (r *recorder) export(_ context.Context, spans []*spanData) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, append([]*spanData(nil), spans...))
	return nil
}

func (r *recorder) spans() []*spanData {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*spanData
	for _, b := range r.batches {
		out = append(out, b...)
	}
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = nil
}

// testTracer is a tracer whose batcher exports to a recorder only when
// flushed (its delay is an hour of the real clock).
func testTracer(t *testing.T, sample sampler) (*Tracer, *recorder) {
	t.Helper()
	rec := &recorder{}
	cfg := batchConfig{delay: time.Hour, maxQueue: 4096, maxBatch: 512}
	tr := newTracer(newBatcher(cfg, clock.Real{}, rec.export, func(context.Context) error { return nil },
		func(err error) { t.Errorf("export error: %v", err) }), sample)
	t.Cleanup(func() { tr.Close(context.Background()) })
	return tr, rec
}

func flush(t *testing.T, tr *Tracer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.b.flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSpansCarryStoredIDs: a run's root span and its attempts' spans have
// the ids the engine stored and derived, the attempts are children of the
// root, a child run's root is a child of its parent's, the times are the
// recorded ones, and an interrupted attempt is an error span.
func TestSpansCarryStoredIDs(t *testing.T) {
	tr, rec := testTracer(t, ratioSampler(1))
	parent := telemetry.NewTrace("RUN1")
	child := telemetry.ChildTrace(parent, "RUN2")
	run := telemetry.Run{ID: "RUN1", Workflow: "deploy", Version: "1.0.0", Status: "completed", Created: t0, Finished: t0.Add(time.Minute), Trace: parent}
	tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "build", Step: "build", Attempt: 1, Kind: "exec", Status: "interrupted", ErrKind: "interrupted",
		Started: t0.Add(time.Second), Finished: t0.Add(20 * time.Second)})
	tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "build", Step: "build", Attempt: 2, Kind: "exec", Status: "completed",
		Started: t0.Add(21 * time.Second), Finished: t0.Add(22 * time.Second)})
	tr.RunEnded(run)
	tr.RunEnded(telemetry.Run{ID: "RUN2", Workflow: "kid", Status: "failed", ErrorKind: "exec", Created: t0.Add(30 * time.Second), Finished: t0.Add(40 * time.Second), Trace: child})
	flush(t, tr)
	spans := rec.spans()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4", len(spans))
	}
	by := map[string]*spanData{}
	for _, s := range spans {
		by[s.name+"/"+s.sid.String()] = s
		if s.tid.String() != parent.TraceID {
			t.Errorf("span %s has trace %s, want %s", s.name, s.tid, parent.TraceID)
		}
	}
	get := func(name, sid string) *spanData {
		t.Helper()
		s, ok := by[name+"/"+sid]
		if !ok {
			t.Fatalf("no span %q with id %s", name, sid)
		}
		return s
	}
	root := get("run deploy", parent.SpanID)
	if root.parent.IsValid() || !root.start.Equal(t0) || !root.end.Equal(t0.Add(time.Minute)) || root.code == codes.Error || root.kind != trace.SpanKindInternal {
		t.Errorf("root span: parent %v, %v..%v, status %v", root.parent, root.start, root.end, root.code)
	}
	a1 := get("step build", telemetry.AttemptSpanID("RUN1", "build", 1))
	if a1.parent.String() != parent.SpanID || a1.code != codes.Error || a1.desc != "interrupted" ||
		!a1.start.Equal(t0.Add(time.Second)) || !a1.end.Equal(t0.Add(20*time.Second)) {
		t.Errorf("interrupted attempt: parent %s, status %v %q, %v..%v", a1.parent, a1.code, a1.desc, a1.start, a1.end)
	}
	a2 := get("step build", telemetry.AttemptSpanID("RUN1", "build", 2))
	if a2.parent.String() != parent.SpanID || a2.code == codes.Error {
		t.Errorf("second attempt: parent %s, status %v", a2.parent, a2.code)
	}
	kid := get("run kid", child.SpanID)
	if kid.parent.String() != parent.SpanID || kid.code != codes.Error || kid.desc != "failed" {
		t.Errorf("child run span: parent %s (want %s), status %v %q", kid.parent, parent.SpanID, kid.code, kid.desc)
	}
}

// TestSampledPerTrace: a ratio sampler keeps or drops a whole run (its
// root and its attempts alike), the same way in every process.
func TestSampledPerTrace(t *testing.T) {
	s, err := samplerFromEnv(func(k string) string {
		return map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, rec := testTracer(t, s)
	kept := 0
	for i := range 40 {
		id := "RUN" + string(rune('A'+i))
		run := telemetry.Run{ID: id, Workflow: "w", Status: "completed", Created: t0, Finished: t0, Trace: telemetry.NewTrace(id)}
		tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "s", Step: "s", Attempt: 1, Kind: "exec", Status: "completed", Started: t0, Finished: t0})
		tr.RunEnded(run)
	}
	flush(t, tr)
	per := map[string]int{}
	for _, sp := range rec.spans() {
		per[sp.tid.String()]++
	}
	for id, n := range per {
		if n != 2 {
			t.Errorf("trace %s has %d spans, want both or none", id, n)
		}
		kept++
	}
	if kept == 0 || kept == 40 {
		t.Errorf("a 0.5 ratio kept %d of 40 runs", kept)
	}
}

// TestEnabled: tracing is off without an endpoint, and when disabled.
func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
	tr, err := New(context.Background(), func(string) string { return "" })
	if tr != nil || err != nil {
		t.Errorf("New without an endpoint = %v, %v; want nil, nil", tr, err)
	}
	if _, err := samplerFromEnv(func(k string) string { return map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"}[k] }); err == nil {
		t.Errorf("an unknown sampler was accepted")
	}
}

// TestSampledMatchesExport: Sampled answers as the export decides.
func TestSampledMatchesExport(t *testing.T) {
	tr, rec := testTracer(t, ratioSampler(0.5))
	for i := range 20 {
		id := "RUN" + string(rune('a'+i))
		trace := telemetry.NewTrace(id)
		tr.RunEnded(telemetry.Run{ID: id, Workflow: "w", Status: "completed", Created: t0, Finished: t0, Trace: trace})
		flush(t, tr)
		exported := len(rec.spans()) == 1
		rec.reset()
		if tr.Sampled(trace.TraceID) != exported {
			t.Errorf("run %s: Sampled %v, exported %v", id, !exported, exported)
		}
	}
	if tr.Sampled("not hex") {
		t.Errorf("an invalid trace id is sampled")
	}
}
