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
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestWireMatchesGeneratedMessages: what appendTracesData writes decodes,
// with opentelemetry-proto's generated TracesData and with the collector's
// ExportTraceServiceRequest, to exactly the messages the conversion of the
// SDK's exporter builds (oracleTracesData): every attribute type at zero
// and non-zero values, statuses, kinds, roots and children, times at and
// before the epoch, a resource with a schema and one without.
func TestWireMatchesGeneratedMessages(t *testing.T) {
	tid := trace.TraceID{0xaa, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid := func(b byte) trace.SpanID { return trace.SpanID{b, 9, 9, 9, 9, 9, 9, 9} }
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
	for _, c := range []struct {
		res   *resource.Resource
		spans []*spanData
	}{
		{resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "one")), spans},
		{resource.NewSchemaless(attribute.String("service.name", "two"), attribute.Bool("canary", false)), spans[:1]},
		{resource.Empty(), spans[1:2]},
		{stubRes, stubSpans()},
	} {
		wire := appendTracesData(nil, c.res, c.spans)
		want := oracleTracesData(c.res, c.spans)
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
	if b := appendTracesData(nil, stubRes, nil); len(b) != 0 {
		t.Errorf("no spans encode to %d bytes", len(b))
	}
}
