// Package tracing exports the engine's runs and attempts as OpenTelemetry
// traces over OTLP/HTTP: a telemetry.Observer whose spans carry the ids the
// engine stored with each run (telemetry.Trace), so that a run worked on by
// several processes, one after another, is one trace.
//
// It is configured by the standard OTEL_* environment variables and is
// off, and costs nothing, when no OTLP endpoint is set: New returns nil
// and the engine keeps its no-op Observer. The spans, their batching
// (batch.go) and their export (otlp.go, otlpwire.go) are this package's
// own; the OpenTelemetry SDK provides the resource only.
//
// tracing must not import the engine, the store or the language, must
// not read the wall clock (every span's start and end are the instants
// the engine recorded, from its clock; the batcher's delay and the
// exporter's waits between retries are timers of a clock.Clock), and must
// not block the engine: spans are queued and exported in the background.
package tracing

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/telemetry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
)

// scopeName is the instrumentation scope of every span.
const scopeName = "github.com/flowrun/flowrun"

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_SDK_DISABLED is not true and
// OTEL_TRACES_EXPORTER is not "none".
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Tracer is a telemetry.Observer that exports spans. Close flushes them.
type Tracer struct {
	telemetry.Nop // claims, commits and fires make no spans
	b             *batcher
	sample        sampler
}

var _ telemetry.Observer = (*Tracer)(nil)

// New returns the tracer the environment configures (getenv reads it:
// the exporter's OTEL_EXPORTER_OTLP_* settings, exporterConfig, and the
// batcher's OTEL_BSP_*, batchFromEnv; the SDK's resource reads
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES itself), or nil when
// Enabled is false. The service name defaults to "flowrun".
// OTEL_TRACES_SAMPLER (always_on, always_off, traceidratio and their
// parentbased_ forms, which decide alike here: a run's spans share its
// trace) decides per trace id, so every process keeps or drops the same
// runs. An export's error goes to OpenTelemetry's error handler (stderr),
// as the SDK's did.
func New(ctx context.Context, getenv func(string) string) (*Tracer, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	if p := firstSet(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" && p != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: flowrun exports traces over http/protobuf only; unset it or set it to http/protobuf", p)
	}
	sample, err := samplerFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := batchFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	exp, err := exporterConfig(getenv, os.ReadFile)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "flowrun")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("the trace resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	export := func(ctx context.Context, spans []*spanData) error { return exp.ExportSpans(ctx, res, spans) }
	return newTracer(newBatcher(cfg, clock.Real{}, export, exp.Shutdown, otel.Handle), sample), nil
}

// newTracer returns a tracer queueing its spans on b.
func newTracer(b *batcher, sample sampler) *Tracer { return &Tracer{b: b, sample: sample} }

// Close exports the spans still queued and stops the exporter; ctx bounds
// the wait.
func (t *Tracer) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.b.shutdown(ctx)
}

// RunEnded exports the run's root span, from its creation to its end: the
// process that ends a run exports it, once. A child run's root span is a
// child of its parent's.
func (t *Tracer) RunEnded(r telemetry.Run) {
	tid, sid, ok := ids(r.Trace.TraceID, r.Trace.SpanID)
	if !ok || !t.sample.sampled(tid) {
		return
	}
	s := &spanData{name: "run " + r.Workflow, tid: tid, sid: sid, kind: trace.SpanKindInternal}
	if _, psid, ok := ids(r.Trace.TraceID, r.Trace.ParentSpanID); ok {
		s.parent = psid
	}
	s.start = r.Created
	if s.start.IsZero() || (!r.Started.IsZero() && r.Started.Before(s.start)) {
		s.start = r.Started
	}
	s.end = end(s.start, r.Finished)
	s.attrs = append(runAttrs(r), attribute.String("flowrun.run.status", r.Status))
	if r.Status == "failed" || r.Status == "canceled" {
		s.attrs = append(s.attrs, attribute.String("flowrun.error.kind", r.ErrorKind))
		if r.ErrorType != "" {
			s.attrs = append(s.attrs, attribute.String("flowrun.error.type", r.ErrorType))
		}
		if r.ErrorStatus != 0 {
			s.attrs = append(s.attrs, attribute.Int("flowrun.error.status", r.ErrorStatus))
		}
		s.code, s.desc = codes.Error, r.Status
	}
	t.b.add(s)
}

// AttemptEnded exports an attempt's span, a child of its run's root span,
// with the id the engine gave its program (TRACEPARENT) or request
// (traceparent). An interrupted attempt, reported by the process that
// reclaimed it, is an error span with the message "interrupted".
func (t *Tracer) AttemptEnded(a telemetry.Attempt) {
	tid, root, ok := ids(a.Run.Trace.TraceID, a.Run.Trace.SpanID)
	if !ok || !t.sample.sampled(tid) {
		return
	}
	_, sid, _ := ids(a.Run.Trace.TraceID, telemetry.AttemptSpanID(a.Run.ID, a.StepKey, a.Attempt))
	s := &spanData{name: "step " + a.StepKey, tid: tid, sid: sid, parent: root, kind: trace.SpanKindInternal,
		start: a.Started, end: end(a.Started, a.Finished)}
	if a.Kind == "http" {
		s.kind = trace.SpanKindClient
	}
	s.attrs = append(runAttrs(a.Run),
		attribute.String("flowrun.step", a.Step),
		attribute.String("flowrun.step.key", a.StepKey),
		attribute.Int("flowrun.attempt", a.Attempt),
		attribute.String("flowrun.action.kind", a.Kind),
		attribute.String("flowrun.attempt.status", a.Status))
	if a.Status != "completed" {
		s.attrs = append(s.attrs, attribute.String("flowrun.error.kind", a.ErrKind))
		s.code, s.desc = codes.Error, a.Status
		if a.Status == "failed" && a.ErrKind != "" {
			s.desc = a.ErrKind
		}
	}
	t.b.add(s)
}

// Sampled reports whether the spans of the trace (hex id) are exported:
// the sampled flag of the trace context programs are given.
func (t *Tracer) Sampled(traceID string) bool {
	tid, _, ok := ids(traceID, "0000000000000001")
	return ok && t.sample.sampled(tid)
}

func runAttrs(r telemetry.Run) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("flowrun.workflow", r.Workflow),
		attribute.String("flowrun.version", r.Version),
		attribute.String("flowrun.run.id", r.ID),
	}
}

// end is finish, or start when finish is unknown or before it.
func end(start, finish time.Time) time.Time {
	if finish.Before(start) {
		return start
	}
	return finish
}

// ids decodes a stored trace id and span id.
func ids(traceHex, spanHex string) (trace.TraceID, trace.SpanID, bool) {
	var tid trace.TraceID
	var sid trace.SpanID
	if len(traceHex) != 32 || len(spanHex) != 16 {
		return tid, sid, false
	}
	if _, err := hex.Decode(tid[:], []byte(traceHex)); err != nil {
		return tid, sid, false
	}
	if _, err := hex.Decode(sid[:], []byte(spanHex)); err != nil {
		return tid, sid, false
	}
	return tid, sid, tid.IsValid() && sid.IsValid()
}

// firstSet returns the first non-empty string.
func firstSet(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
