package tracing

import (
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestWireMatchesGeneratedMessages: what appendTracesData writes decodes,
// with opentelemetry-proto's generated TracesData and with the collector's
// ExportTraceServiceRequest, to exactly the messages the SDK exporter's
// conversion builds (oracleTracesData): every attribute type at zero and
// non-zero values, events, links, statuses, kinds, parents, resources and
// scopes.
func TestWireMatchesGeneratedMessages(t *testing.T) {
	tid := trace.TraceID{0xaa, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("vendor=value")
	if err != nil {
		t.Fatal(err)
	}
	sc := func(sid byte, flags trace.TraceFlags, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{sid, 9, 9, 9, 9, 9, 9, 9}, TraceFlags: flags, TraceState: ts, Remote: remote})
	}
	every := []attribute.KeyValue{
		attribute.Bool("f", false), attribute.Bool("t", true),
		attribute.Int64("zero", 0), attribute.Int64("neg", -7), attribute.Int64("max", math.MaxInt64),
		attribute.Float64("fz", 0), attribute.Float64("pi", math.Pi), attribute.Float64("nan", math.NaN()),
		attribute.String("empty", ""), attribute.String("s", "wörd"),
		attribute.ByteSlice("bytes", []byte{0, 1, 2}), attribute.ByteSlice("nobytes", nil),
		attribute.BoolSlice("bs", []bool{false, true}), attribute.Int64Slice("is", []int64{0, -1, 1}),
		attribute.Float64Slice("fs", []float64{0, 2.5}), attribute.StringSlice("ss", []string{"", "x"}),
		attribute.StringSlice("none", []string{}),
		attribute.Slice("mixed", attribute.IntValue(1), attribute.StringValue("two"), attribute.SliceValue(attribute.BoolValue(false))),
		attribute.Map("m", attribute.String("k", "v"), attribute.Map("inner", attribute.Int("n", 0))),
		{Key: "unset"}, // an EMPTY value
	}
	res1 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "one"))
	res2 := resource.NewSchemaless(attribute.String("service.name", "two"), attribute.Bool("canary", false))
	scope := instrumentation.Scope{Name: "lib", Version: "v1", SchemaURL: "https://example.com/s", Attributes: attribute.NewSet(attribute.String("a", "b"))}
	stubs := tracetest.SpanStubs{
		{Name: "everything", SpanContext: sc(1, trace.FlagsSampled, false), Parent: sc(2, trace.FlagsSampled, true), SpanKind: trace.SpanKindServer,
			StartTime: t0, EndTime: t0.Add(time.Millisecond), Attributes: every,
			Events: []sdktrace.Event{{Name: "e1", Time: t0, Attributes: every, DroppedAttributeCount: 3}, {Name: "bare", Time: time.Unix(0, 0)}},
			Links:  []sdktrace.Link{{SpanContext: sc(3, 0, false), Attributes: every[:4], DroppedAttributeCount: 1}, {SpanContext: sc(4, trace.FlagsSampled, true)}},
			Status: sdktrace.Status{Code: codes.Error, Description: "boom"}, DroppedAttributes: 2, DroppedEvents: 5, DroppedLinks: 1,
			Resource: res1, InstrumentationScope: scope},
		{Name: "", SpanContext: sc(5, 0, false), StartTime: time.Time{}, EndTime: time.Time{}, Resource: res1, InstrumentationScope: scope},
		{Name: "other scope", SpanContext: sc(6, trace.FlagsSampled, false), SpanKind: trace.SpanKindClient, StartTime: t0, EndTime: t0,
			Status: sdktrace.Status{Code: codes.Ok}, Resource: res1},
		{Name: "other resource", SpanContext: sc(7, trace.FlagsSampled, false), Parent: sc(5, 0, false), SpanKind: trace.SpanKindProducer,
			StartTime: t0, EndTime: t0.Add(time.Hour), Resource: res2, InstrumentationScope: instrumentation.Scope{Name: "x"}},
		{Name: "internal", SpanContext: sc(8, trace.FlagsSampled, false), SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0, Resource: res1, InstrumentationScope: scope},
		{Name: "consumer", SpanContext: sc(9, trace.FlagsSampled, false), SpanKind: trace.SpanKindConsumer, StartTime: t0, EndTime: t0, Resource: res2, InstrumentationScope: instrumentation.Scope{Name: "x"}},
	}
	for _, spans := range [][]sdktrace.ReadOnlySpan{stubs.Snapshots(), stubs[:1].Snapshots(), stubSpans()} {
		wire := appendTracesData(nil, spans)
		want := oracleTracesData(spans)
		var got tracepb.TracesData
		if err := proto.Unmarshal(wire, &got); err != nil {
			t.Fatalf("decoding as TracesData: %v", err)
		}
		if !proto.Equal(&got, want) {
			t.Errorf("decoded:\n%v\nwant:\n%v", &got, want)
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(wire, &req); err != nil || !proto.Equal(&tracepb.TracesData{ResourceSpans: req.ResourceSpans}, want) {
			t.Errorf("as ExportTraceServiceRequest: %v, %v", err, &req)
		}
	}
	if b := appendTracesData(nil, nil); len(b) != 0 {
		t.Errorf("no spans encode to %d bytes", len(b))
	}
}
