package tracing

import (
	"math"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP protobuf encoding of spans, written with protowire from the
// field numbers of opentelemetry-proto's trace/v1, common/v1 and
// resource/v1 (the generated packages register their descriptors at init,
// in every flowrun process). Fields at their zero value are left out, as
// proto3 does, except a oneof's value and the messages the SDK's exporter
// always set (a span's status, a resource). Spans have no events or links
// here: the tracer makes none.

// OTLP field numbers.
const (
	tracesDataResourceSpans = 1

	resourceSpansResource   = 1
	resourceSpansScopeSpans = 2
	resourceSpansSchemaURL  = 3

	resourceAttributes = 1

	scopeSpansScope = 1
	scopeSpansSpans = 2

	scopeNameField = 1

	spanTraceID      = 1
	spanSpanID       = 2
	spanParentSpanID = 4
	spanName         = 5
	spanKind         = 6
	spanStart        = 7
	spanEnd          = 8
	spanAttributes   = 9
	spanStatus       = 15
	spanFlags        = 16

	statusMessage = 2
	statusCode    = 3

	keyValueKey   = 1
	keyValueValue = 2

	anyString = 1
	anyBool   = 2
	anyInt    = 3
	anyDouble = 4
	anyArray  = 5
	anyKVList = 6
	anyBytes  = 7

	listValues = 1 // ArrayValue.values and KeyValueList.values

	// SpanFlags: the low byte is the W3C trace flags.
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200

	// Span.SpanKind and Status.StatusCode values.
	kindUnspecified, kindInternal, kindServer, kindClient, kindProducer, kindConsumer = 0, 1, 2, 3, 4, 5
	codeUnset, codeOK, codeError                                                      = 0, 1, 2
)

// appendTracesData appends the TracesData of spans (wire-compatible with
// the collector's ExportTraceServiceRequest): one ResourceSpans of res,
// holding one ScopeSpans of scopeName with the spans. It returns b
// unchanged when there is no span.
func appendTracesData(b []byte, res *resource.Resource, spans []*spanData) []byte {
	if len(spans) == 0 {
		return b
	}
	return appendMessage(b, tracesDataResourceSpans, func(b []byte) []byte {
		if res != nil {
			b = appendMessage(b, resourceSpansResource, func(b []byte) []byte {
				return appendKeyValues(b, resourceAttributes, res.Attributes())
			})
		}
		b = appendMessage(b, resourceSpansScopeSpans, func(b []byte) []byte {
			b = appendMessage(b, scopeSpansScope, func(b []byte) []byte { return appendString(b, scopeNameField, scopeName) })
			for _, s := range spans {
				b = appendMessage(b, scopeSpansSpans, func(b []byte) []byte { return appendSpan(b, s) })
			}
			return b
		})
		if res != nil {
			b = appendString(b, resourceSpansSchemaURL, res.SchemaURL())
		}
		return b
	})
}

// appendSpan appends a span's fields. Every span here is sampled, and its
// parent, when it has one, is remote (another process's span, or this
// process's from before): the flags say so.
func appendSpan(b []byte, s *spanData) []byte {
	b = appendBytes(b, spanTraceID, s.tid[:])
	b = appendBytes(b, spanSpanID, s.sid[:])
	if s.parent.IsValid() {
		b = appendBytes(b, spanParentSpanID, s.parent[:])
	}
	b = appendString(b, spanName, s.name)
	b = appendVarint(b, spanKind, kindNumber(s.kind))
	b = appendFixed64(b, spanStart, unixNano(s.start.UnixNano()))
	b = appendFixed64(b, spanEnd, unixNano(s.end.UnixNano()))
	b = appendKeyValues(b, spanAttributes, s.attrs)
	b = appendMessage(b, spanStatus, func(b []byte) []byte {
		if s.code == codes.Error {
			b = appendString(b, statusMessage, s.desc)
		}
		return appendVarint(b, statusCode, codeNumber(s.code))
	})
	flags := uint32(trace.FlagsSampled) | flagHasIsRemote
	if s.parent.IsValid() {
		flags |= flagIsRemote
	}
	return appendFixed32(b, spanFlags, flags)
}

func kindNumber(k trace.SpanKind) uint64 {
	switch k {
	case trace.SpanKindInternal:
		return kindInternal
	case trace.SpanKindServer:
		return kindServer
	case trace.SpanKindClient:
		return kindClient
	case trace.SpanKindProducer:
		return kindProducer
	case trace.SpanKindConsumer:
		return kindConsumer
	}
	return kindUnspecified
}

func codeNumber(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return codeOK
	case codes.Error:
		return codeError
	}
	return codeUnset
}

// appendKeyValues appends each attribute as a KeyValue in field num.
func appendKeyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, num, func(b []byte) []byte {
			b = appendString(b, keyValueKey, string(kv.Key))
			return appendMessage(b, keyValueValue, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
		})
	}
	return b
}

// appendAnyValue appends the fields of an AnyValue: the oneof's field is
// written even at its zero value (false, 0, ""), which is how a receiver
// tells it is set.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return protowire.AppendVarint(protowire.AppendTag(b, anyBool, protowire.VarintType), protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		return protowire.AppendVarint(protowire.AppendTag(b, anyInt, protowire.VarintType), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return protowire.AppendFixed64(protowire.AppendTag(b, anyDouble, protowire.Fixed64Type), math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return protowire.AppendString(protowire.AppendTag(b, anyString, protowire.BytesType), v.AsString())
	case attribute.BYTESLICE:
		return protowire.AppendBytes(protowire.AppendTag(b, anyBytes, protowire.BytesType), v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return appendMessage(b, anyKVList, func(b []byte) []byte { return appendKeyValues(b, listValues, v.AsMap()) })
	case attribute.EMPTY:
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, anyString, protowire.BytesType), "INVALID")
}

func appendArray[T any](b []byte, vs []T, value func(T) attribute.Value) []byte {
	return appendMessage(b, anyArray, func(b []byte) []byte {
		for _, v := range vs {
			b = appendMessage(b, listValues, func(b []byte) []byte { return appendAnyValue(b, value(v)) })
		}
		return b
	})
}

// appendMessage appends field num holding the message body appends, its
// length written in front of it once known.
func appendMessage(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = body(b)
	var size [10]byte
	return slices.Insert(b, at, protowire.AppendVarint(size[:0], uint64(len(b)-at))...)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), v)
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }
