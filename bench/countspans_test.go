package bench

import (
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestCountSpans: the receiver of the telemetry scenario counts every span
// of an export, across resources and scopes, and refuses a body that is
// not protobuf.
func TestCountSpans(t *testing.T) {
	span := func(name string) *tracepb.Span {
		return &tracepb.Span{Name: name, TraceId: make([]byte, 16), SpanId: make([]byte, 8)}
	}
	req := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{Resource: &resourcepb.Resource{}, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span("a"), span("b")}}, {Spans: []*tracepb.Span{span("c")}}}},
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span("d")}}}, SchemaUrl: "x"},
	}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := countSpans(b); n != 4 || err != nil {
		t.Errorf("countSpans = %d, %v; want 4", n, err)
	}
	if _, err := countSpans([]byte("not protobuf")); err == nil {
		t.Errorf("a body that is not protobuf was counted")
	}
}
