// Package tracing exports the engine's runs and attempts as OpenTelemetry
// traces over OTLP/HTTP: a telemetry.Observer whose spans carry the ids the
// engine stored with each run (telemetry.Trace), so that a run worked on by
// several processes, one after another, is one trace.
//
// It is configured by the standard OTEL_* environment variables and is
// off, and costs nothing, when no OTLP endpoint is set: New returns nil
// and the engine keeps its no-op Observer.
//
// tracing must not import the engine, the store or the language, must
// not read the wall clock (every span's start and end are the instants
// the engine recorded, from its clock; the SDK's batch processor keeps
// its own timers, and the exporter waits between retries on a
// clock.Clock), and must not block the engine: spans are queued and
// exported in the background.
package tracing

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flowrun/flowrun/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

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
	tp            *sdktrace.TracerProvider
	tr            trace.Tracer
	sample        sdktrace.Sampler
}

var _ telemetry.Observer = (*Tracer)(nil)

// New returns the tracer the environment configures (getenv reads it,
// the exporter's OTEL_EXPORTER_OTLP_* settings included: exporterConfig;
// the SDK's batch processor and resource read their own OTEL_* variables
// as the OpenTelemetry SDK documents), or nil when Enabled is false. The
// service name defaults to "flowrun" (OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override it). OTEL_TRACES_SAMPLER (always_on,
// always_off, traceidratio and their parentbased_ forms, which decide
// alike here: a run's spans share its trace) decides per trace id, so
// every process keeps or drops the same runs.
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
	exp, err := exporterConfig(getenv, os.ReadFile)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "flowrun")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("the trace resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	return newTracer(exp, res, sample), nil
}

// newTracer returns a tracer exporting through exp in batches.
func newTracer(exp sdktrace.SpanExporter, res *resource.Resource, sample sdktrace.Sampler) *Tracer {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()), // decided per trace by sample
		sdktrace.WithIDGenerator(givenIDs{}),
	)
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/flowrun/flowrun"), sample: sample}
}

// Close exports the spans still queued and stops the exporter; ctx bounds
// the wait.
func (t *Tracer) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// RunEnded exports the run's root span, from its creation to its end: the
// process that ends a run exports it, once. A child run's root span is a
// child of its parent's.
func (t *Tracer) RunEnded(r telemetry.Run) {
	tid, sid, ok := ids(r.Trace.TraceID, r.Trace.SpanID)
	if !ok || !t.sampled(tid) {
		return
	}
	ctx := context.Background()
	if _, psid, ok := ids(r.Trace.TraceID, r.Trace.ParentSpanID); ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, remote(tid, psid))
	}
	ctx = withIDs(ctx, tid, sid)
	start := r.Created
	if start.IsZero() || (!r.Started.IsZero() && r.Started.Before(start)) {
		start = r.Started
	}
	_, span := t.tr.Start(ctx, "run "+r.Workflow, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(runAttrs(r)...))
	span.SetAttributes(attribute.String("flowrun.run.status", r.Status))
	if r.Status == "failed" || r.Status == "canceled" {
		span.SetAttributes(attribute.String("flowrun.error.kind", r.ErrorKind))
		span.SetStatus(codes.Error, r.Status)
	}
	span.End(trace.WithTimestamp(end(start, r.Finished)))
}

// AttemptEnded exports an attempt's span, a child of its run's root span,
// with the id the engine gave its program (TRACEPARENT) or request
// (traceparent). An interrupted attempt, reported by the process that
// reclaimed it, is an error span with the message "interrupted".
func (t *Tracer) AttemptEnded(a telemetry.Attempt) {
	tid, root, ok := ids(a.Run.Trace.TraceID, a.Run.Trace.SpanID)
	if !ok || !t.sampled(tid) {
		return
	}
	_, sid, _ := ids(a.Run.Trace.TraceID, telemetry.AttemptSpanID(a.Run.ID, a.StepKey, a.Attempt))
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote(tid, root))
	ctx = withIDs(ctx, tid, sid)
	kind := trace.SpanKindInternal
	if a.Kind == "http" {
		kind = trace.SpanKindClient
	}
	attrs := append(runAttrs(a.Run),
		attribute.String("flowrun.step", a.Step),
		attribute.String("flowrun.step.key", a.StepKey),
		attribute.Int("flowrun.attempt", a.Attempt),
		attribute.String("flowrun.action.kind", a.Kind),
		attribute.String("flowrun.attempt.status", a.Status))
	_, span := t.tr.Start(ctx, "step "+a.StepKey, trace.WithTimestamp(a.Started), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	if a.Status != "completed" {
		span.SetAttributes(attribute.String("flowrun.error.kind", a.ErrKind))
		msg := a.Status
		if a.Status == "failed" && a.ErrKind != "" {
			msg = a.ErrKind
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(end(a.Started, a.Finished)))
}

// Sampled reports whether the spans of the trace (hex id) are exported:
// the sampled flag of the trace context programs are given.
func (t *Tracer) Sampled(traceID string) bool {
	tid, _, ok := ids(traceID, "0000000000000001")
	return ok && t.sampled(tid)
}

// sampled is the sampler's decision for a trace id.
func (t *Tracer) sampled(tid trace.TraceID) bool {
	return t.sample.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: tid}).Decision == sdktrace.RecordAndSample
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

// remote is the span context of a span another process (or this one,
// earlier) owns: the parent of spans exported here.
func remote(tid trace.TraceID, sid trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
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

// givenIDs is the provider's IDGenerator: it returns the ids withIDs put
// in the context, so a span gets the id the engine stored or derived.
type givenIDs struct{}

type idsKey struct{}

type givenPair struct {
	tid trace.TraceID
	sid trace.SpanID
}

func withIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, givenPair{tid, sid})
}

func (givenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	p, _ := ctx.Value(idsKey{}).(givenPair)
	return p.tid, p.sid
}

func (givenIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	p, _ := ctx.Value(idsKey{}).(givenPair)
	return p.sid
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	switch strings.TrimPrefix(name, "parentbased_") {
	case "", "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		ratio := 1.0
		if arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || r < 0 || r > 1 {
				return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1", arg)
			}
			ratio = r
		}
		return sdktrace.TraceIDRatioBased(ratio), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: flowrun knows always_on, always_off, traceidratio and their parentbased_ forms", name)
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
