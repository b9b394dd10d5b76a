package tracing

// The reference encoding of otlpwire_test.go: spans converted to the
// generated opentelemetry-proto messages, the way the SDK exporter did.

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// oracleTracesData converts spans of res to the generated messages, field
// by field, the way the SDK's exporter converted its spans.
func oracleTracesData(res *resource.Resource, spans []*spanData) *tracepb.TracesData {
	ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: scopeName}}
	for _, s := range spans {
		ss.Spans = append(ss.Spans, oSpanProto(s))
	}
	rs := &tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{ss}}
	if res != nil {
		rs.Resource = &resourcepb.Resource{Attributes: oKeyValues(res.Attributes())}
		rs.SchemaUrl = res.SchemaURL()
	}
	return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{rs}}
}

func oSpanProto(s *spanData) *tracepb.Span {
	p := &tracepb.Span{
		TraceId:           append([]byte(nil), s.tid[:]...),
		SpanId:            append([]byte(nil), s.sid[:]...),
		Name:              s.name,
		Kind:              oKindProto(s.kind),
		StartTimeUnixNano: oUnixNano(s.start.UnixNano()),
		EndTimeUnixNano:   oUnixNano(s.end.UnixNano()),
		Attributes:        oKeyValues(s.attrs),
		Status:            &tracepb.Status{Code: oStatusProto(s.code)},
		Flags:             uint32(trace.FlagsSampled) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK),
	}
	if s.code == codes.Error {
		p.Status.Message = s.desc
	}
	if s.parent.IsValid() {
		p.ParentSpanId = append([]byte(nil), s.parent[:]...)
		p.Flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return p
}

func oKindProto(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

func oStatusProto(c codes.Code) tracepb.Status_StatusCode {
	switch c {
	case codes.Ok:
		return tracepb.Status_STATUS_CODE_OK
	case codes.Error:
		return tracepb.Status_STATUS_CODE_ERROR
	}
	return tracepb.Status_STATUS_CODE_UNSET
}

func oKeyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = &commonpb.KeyValue{Key: string(kv.Key), Value: oAnyValue(kv.Value)}
	}
	return out
}

func oAnyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.BOOLSLICE:
		return oArray(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return oArray(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return oArray(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return oArray(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return oArray(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: oKeyValues(v.AsMap())}}}
	case attribute.EMPTY:
		return &commonpb.AnyValue{}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "INVALID"}}
}

func oArray[T any](vs []T, value func(T) attribute.Value) *commonpb.AnyValue {
	out := make([]*commonpb.AnyValue, len(vs))
	for i, v := range vs {
		out[i] = oAnyValue(value(v))
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: out}}}
}

func oUnixNano(n int64) uint64 { return uint64(max(0, n)) }
