package tracing

import (
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestWireMatchesGeneratedMessages: what appendTracesData writes decodes,
// with opentelemetry-proto's generated TracesData and with the collector's
// ExportTraceServiceRequest, to the messages written out below field by
// field: every attribute type at zero and non-zero values, statuses,
// kinds, roots and children, times at and before the epoch, a resource
// with a schema and one without.
func TestWireMatchesGeneratedMessages(t *testing.T) {
	tidB := []byte{0xaa, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	tid := trace.TraceID(tidB)
	sid := func(b byte) trace.SpanID { return trace.SpanID{b, 9, 9, 9, 9, 9, 9, 9} }
	sidB := func(b byte) []byte { return []byte{b, 9, 9, 9, 9, 9, 9, 9} }
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
	spans := []*spanData{
		{name: "everything", tid: tid, sid: sid(1), parent: sid(2), kind: trace.SpanKindServer, start: t0, end: t0.Add(time.Millisecond),
			attrs: every, code: codes.Error, desc: "boom"},
		{name: "", tid: tid, sid: sid(5)},
		{name: "before the epoch", tid: tid, sid: sid(6), kind: trace.SpanKindClient, start: time.Unix(-5, 0), end: time.Unix(0, 0), code: codes.Ok, desc: "dropped"},
		{name: "producer", tid: tid, sid: sid(7), parent: sid(5), kind: trace.SpanKindProducer, start: t0, end: t0.Add(time.Hour)},
		{name: "internal", tid: tid, sid: sid(8), kind: trace.SpanKindInternal, start: t0, end: t0, code: codes.Unset, desc: "dropped too"},
		{name: "consumer", tid: tid, sid: sid(9), kind: trace.SpanKindConsumer, start: t0, end: t0},
	}

	// The messages, as OTLP defines them: a sampled span's flags say that
	// whether its parent is remote is known (0x100), and a child's that
	// its parent is remote (0x200), as every parent of the engine's spans
	// is; a time before the epoch is 0; a status message is kept only for
	// an error.
	const root, child = 0x101, 0x301
	t0n := uint64(t0.UnixNano())
	wantEvery := []*commonpb.KeyValue{
		kv("f", pbBool(false)), kv("t", pbBool(true)),
		kv("zero", pbInt(0)), kv("neg", pbInt(-7)),
		kv("max", pbInt(math.MaxInt64)),
		kv("fz", pbDouble(0)), kv("pi", pbDouble(math.Pi)),
		kv("nan", pbDouble(math.NaN())), // proto.Equal takes NaN as equal to NaN
		kv("empty", pbString("")), kv("s", pbString("wörd")),
		kv("bytes", pbBytes([]byte{0, 1, 2})), kv("nobytes", pbBytes(nil)),
		kv("bs", pbArray(pbBool(false), pbBool(true))),
		kv("is", pbArray(pbInt(0), pbInt(-1), pbInt(1))),
		kv("fs", pbArray(pbDouble(0), pbDouble(2.5))),
		kv("ss", pbArray(pbString(""), pbString("x"))),
		kv("none", pbArray()),
		kv("mixed", pbArray(pbInt(1), pbString("two"),
			pbArray(pbBool(false)))),
		// attribute.Map keeps its members sorted by key.
		kv("m", pbMap(kv("inner", pbMap(kv("n", pbInt(0)))), kv("k", pbString("v")))),
		{Key: "unset", Value: &commonpb.AnyValue{}},
	}
	wantSpans := []*tracepb.Span{
		{TraceId: tidB, SpanId: sidB(1), ParentSpanId: sidB(2), Name: "everything", Kind: tracepb.Span_SPAN_KIND_SERVER,
			StartTimeUnixNano: t0n, EndTimeUnixNano: t0n + uint64(time.Millisecond), Attributes: wantEvery,
			Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"}, Flags: child},
		{TraceId: tidB, SpanId: sidB(5), Kind: tracepb.Span_SPAN_KIND_UNSPECIFIED, Status: &tracepb.Status{}, Flags: root},
		{TraceId: tidB, SpanId: sidB(6), Name: "before the epoch", Kind: tracepb.Span_SPAN_KIND_CLIENT,
			Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}, Flags: root},
		{TraceId: tidB, SpanId: sidB(7), ParentSpanId: sidB(5), Name: "producer", Kind: tracepb.Span_SPAN_KIND_PRODUCER,
			StartTimeUnixNano: t0n, EndTimeUnixNano: t0n + uint64(time.Hour), Status: &tracepb.Status{}, Flags: child},
		{TraceId: tidB, SpanId: sidB(8), Name: "internal", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: t0n, EndTimeUnixNano: t0n, Status: &tracepb.Status{}, Flags: root},
		{TraceId: tidB, SpanId: sidB(9), Name: "consumer", Kind: tracepb.Span_SPAN_KIND_CONSUMER,
			StartTimeUnixNano: t0n, EndTimeUnixNano: t0n, Status: &tracepb.Status{}, Flags: root},
	}
	data := func(res *resourcepb.Resource, schema string, spans ...*tracepb.Span) *tracepb.TracesData {
		return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource:   res,
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: scopeName}, Spans: spans}},
			SchemaUrl:  schema,
		}}}
	}
	const schema = "https://opentelemetry.io/schemas/1.26.0"
	for i, c := range []struct {
		res   *resource.Resource
		spans []*spanData
		want  *tracepb.TracesData
	}{
		{resource.NewWithAttributes(schema, attribute.String("service.name", "one")), spans,
			data(&resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", pbString("one"))}},
				schema, wantSpans...)},
		// A resource's attributes are sorted by key.
		{resource.NewSchemaless(attribute.String("service.name", "two"), attribute.Bool("canary", false)), spans[:1],
			data(&resourcepb.Resource{Attributes: []*commonpb.KeyValue{
				kv("canary", pbBool(false)),
				kv("service.name", pbString("two")),
			}}, "", wantSpans[0])},
		{resource.Empty(), spans[1:2], data(&resourcepb.Resource{}, "", wantSpans[1])},
	} {
		wire := appendTracesData(nil, c.res, c.spans)
		var got tracepb.TracesData
		if err := proto.Unmarshal(wire, &got); err != nil {
			t.Fatalf("case %d: decoding as TracesData: %v", i, err)
		}
		if !proto.Equal(&got, c.want) {
			t.Errorf("case %d: decoded:\n%v\nwant:\n%v", i, &got, c.want)
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(wire, &req); err != nil || !proto.Equal(&tracepb.TracesData{ResourceSpans: req.ResourceSpans}, c.want) {
			t.Errorf("case %d: as ExportTraceServiceRequest: %v, %v", i, err, &req)
		}
	}
	if b := appendTracesData(nil, stubRes, nil); len(b) != 0 {
		t.Errorf("no spans encode to %d bytes", len(b))
	}
}

// The generated messages' values, written short.
func kv(key string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: key, Value: v}
}
func pbBool(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}
func pbInt(n int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
}
func pbDouble(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}
func pbString(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}
func pbBytes(b []byte) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: b}}
}
func pbArray(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}
func pbMap(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}}
}
