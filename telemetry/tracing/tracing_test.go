package tracing

import (
	"context"
	"testing"
	"time"

	"github.com/flowrun/flowrun/telemetry"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestSpansCarryStoredIDs: a run's root span and its attempts' spans have
// the ids the engine stored and derived, the attempts are children of the
// root, a child run's root is a child of its parent's, the times are the
// recorded ones, and an interrupted attempt is an error span.
func TestSpansCarryStoredIDs(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := newTracer(exp, resource.Empty(), sdktrace.AlwaysSample())
	parent := telemetry.NewTrace("RUN1")
	child := telemetry.ChildTrace(parent, "RUN2")
	run := telemetry.Run{ID: "RUN1", Workflow: "deploy", Version: "1.0.0", Status: "completed", Created: t0, Finished: t0.Add(time.Minute), Trace: parent}
	tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "build", Step: "build", Attempt: 1, Kind: "exec", Status: "interrupted", ErrKind: "interrupted",
		Started: t0.Add(time.Second), Finished: t0.Add(20 * time.Second)})
	tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "build", Step: "build", Attempt: 2, Kind: "exec", Status: "completed",
		Started: t0.Add(21 * time.Second), Finished: t0.Add(22 * time.Second)})
	tr.RunEnded(run)
	tr.RunEnded(telemetry.Run{ID: "RUN2", Workflow: "kid", Status: "failed", ErrorKind: "exec", Created: t0.Add(30 * time.Second), Finished: t0.Add(40 * time.Second), Trace: child})
	if err := tr.tp.ForceFlush(context.Background()); err != nil { // (Shutdown would clear the in-memory exporter)
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4", len(spans))
	}
	by := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		by[s.Name+"/"+s.SpanContext.SpanID().String()] = s
		if s.SpanContext.TraceID().String() != parent.TraceID {
			t.Errorf("span %s has trace %s, want %s", s.Name, s.SpanContext.TraceID(), parent.TraceID)
		}
	}
	get := func(name, sid string) tracetest.SpanStub {
		t.Helper()
		s, ok := by[name+"/"+sid]
		if !ok {
			t.Fatalf("no span %q with id %s among %v", name, sid, keys(by))
		}
		return s
	}
	root := get("run deploy", parent.SpanID)
	if root.Parent.IsValid() || !root.StartTime.Equal(t0) || !root.EndTime.Equal(t0.Add(time.Minute)) || root.Status.Code == codes.Error {
		t.Errorf("root span: parent %v, %v..%v, status %v", root.Parent, root.StartTime, root.EndTime, root.Status)
	}
	a1 := get("step build", telemetry.AttemptSpanID("RUN1", "build", 1))
	if a1.Parent.SpanID().String() != parent.SpanID || a1.Status.Code != codes.Error || a1.Status.Description != "interrupted" ||
		!a1.StartTime.Equal(t0.Add(time.Second)) || !a1.EndTime.Equal(t0.Add(20*time.Second)) {
		t.Errorf("interrupted attempt: parent %s, status %v, %v..%v", a1.Parent.SpanID(), a1.Status, a1.StartTime, a1.EndTime)
	}
	a2 := get("step build", telemetry.AttemptSpanID("RUN1", "build", 2))
	if a2.Parent.SpanID().String() != parent.SpanID || a2.Status.Code == codes.Error {
		t.Errorf("second attempt: parent %s, status %v", a2.Parent.SpanID(), a2.Status)
	}
	kid := get("run kid", child.SpanID)
	if kid.Parent.SpanID().String() != parent.SpanID || kid.Status.Code != codes.Error {
		t.Errorf("child run span: parent %s (want %s), status %v", kid.Parent.SpanID(), parent.SpanID, kid.Status)
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
	exp := tracetest.NewInMemoryExporter()
	tr := newTracer(exp, resource.Empty(), s)
	kept := 0
	for i := range 40 {
		id := "RUN" + string(rune('A'+i))
		run := telemetry.Run{ID: id, Workflow: "w", Status: "completed", Created: t0, Finished: t0, Trace: telemetry.NewTrace(id)}
		tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "s", Step: "s", Attempt: 1, Kind: "exec", Status: "completed", Started: t0, Finished: t0})
		tr.RunEnded(run)
	}
	if err := tr.tp.ForceFlush(context.Background()); err != nil { // (Shutdown would clear the in-memory exporter)
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, sp := range exp.GetSpans() {
		per[sp.SpanContext.TraceID().String()]++
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

func keys(m map[string]tracetest.SpanStub) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSampledMatchesExport: Sampled answers as the export decides.
func TestSampledMatchesExport(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := newTracer(exp, resource.Empty(), sdktrace.TraceIDRatioBased(0.5))
	for i := range 20 {
		id := "RUN" + string(rune('a'+i))
		trace := telemetry.NewTrace(id)
		tr.RunEnded(telemetry.Run{ID: id, Workflow: "w", Status: "completed", Created: t0, Finished: t0, Trace: trace})
		if err := tr.tp.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		exported := len(exp.GetSpans()) == 1
		exp.Reset()
		if tr.Sampled(trace.TraceID) != exported {
			t.Errorf("run %s: Sampled %v, exported %v", id, !exported, exported)
		}
	}
	if tr.Sampled("not hex") {
		t.Errorf("an invalid trace id is sampled")
	}
}
