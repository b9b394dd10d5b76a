package tracing

// The reference encoding of otlpwire_test.go: spans converted to the
// generated opentelemetry-proto messages, the way the SDK exporter did.

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// tracesData converts finished spans to OTLP messages, grouped by resource
// and then by instrumentation scope, each group in the order its first
// span came.
func oracleTracesData(spans []sdktrace.ReadOnlySpan) *tracepb.TracesData {
	type scopeKey struct {
		res   attribute.Distinct
		scope instrumentation.Scope
	}
	out := &tracepb.TracesData{}
	byRes := map[attribute.Distinct]*tracepb.ResourceSpans{}
	byScope := map[scopeKey]*tracepb.ScopeSpans{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		rk := res.Equivalent()
		rs, ok := byRes[rk]
		if !ok {
			rs = &tracepb.ResourceSpans{Resource: oResourceProto(res), SchemaUrl: res.SchemaURL()}
			byRes[rk] = rs
			out.ResourceSpans = append(out.ResourceSpans, rs)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{rk, sc}
		ss, ok := byScope[sk]
		if !ok {
			ss = &tracepb.ScopeSpans{Scope: oScopeProto(sc), SchemaUrl: sc.SchemaURL}
			byScope[sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, oSpanProto(s))
	}
	return out
}

func oResourceProto(r *resource.Resource) *resourcepb.Resource {
	if r == nil {
		return nil
	}
	return &resourcepb.Resource{Attributes: oKeyValues(r.Attributes())}
}

func oScopeProto(sc instrumentation.Scope) *commonpb.InstrumentationScope {
	if sc == (instrumentation.Scope{}) {
		return nil
	}
	return &commonpb.InstrumentationScope{Name: sc.Name, Version: sc.Version, Attributes: oKeyValues(sc.Attributes.ToSlice())}
}

func oSpanProto(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	st := s.Status()
	p := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Name:                   s.Name(),
		Kind:                   oKindProto(s.SpanKind()),
		StartTimeUnixNano:      oUnixNano(s.StartTime().UnixNano()),
		EndTimeUnixNano:        oUnixNano(s.EndTime().UnixNano()),
		Attributes:             oKeyValues(s.Attributes()),
		DroppedAttributesCount: oClamp32(s.DroppedAttributes()),
		DroppedEventsCount:     oClamp32(s.DroppedEvents()),
		DroppedLinksCount:      oClamp32(s.DroppedLinks()),
		Status:                 &tracepb.Status{Code: oStatusProto(st.Code), Message: st.Description},
	}
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		p.ParentSpanId = psid[:]
	}
	p.Flags = oSpanFlags(sc.TraceFlags(), parent)
	for _, e := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{
			Name:                   e.Name,
			TimeUnixNano:           oUnixNano(e.Time.UnixNano()),
			Attributes:             oKeyValues(e.Attributes),
			DroppedAttributesCount: oClamp32(e.DroppedAttributeCount),
		})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{
			TraceId:                ltid[:],
			SpanId:                 lsid[:],
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             oKeyValues(l.Attributes),
			DroppedAttributesCount: oClamp32(l.DroppedAttributeCount),
			Flags:                  oSpanFlags(l.SpanContext.TraceFlags(), l.SpanContext),
		})
	}
	return p
}

// spanFlags are the W3C trace flags in the low byte, with the bits saying
// whether the parent (or linked span) is remote.
func oSpanFlags(f trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(f) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return flags
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

func oClamp32(n int) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }
