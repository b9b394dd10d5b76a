package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Trace is a run's place in its trace, in W3C trace-context hex: the
// trace id (32 digits), the run's root span id (16) and the span the root
// span is a child of (16; empty for a top-level run).
type Trace struct {
	TraceID      string
	SpanID       string
	ParentSpanID string
}

// Valid reports whether t has a trace id and a root span id.
func (t Trace) Valid() bool { return len(t.TraceID) == 32 && len(t.SpanID) == 16 }

// NewTrace returns the trace of a new top-level run: a trace of its own
// whose ids are derived from the run id (a ULID carries 80 random bits),
// so the engine spends nothing of its random source on them and replays
// the same on a fake clock and seed.
func NewTrace(runID string) Trace {
	return Trace{TraceID: hexOf("trace", runID, 16), SpanID: hexOf("run", runID, 8)}
}

// ChildTrace returns the trace of a child run started by a run whose
// trace is parent: the parent's trace, a root span of its own, child of
// the parent's root span. A parent without a trace gives the child a
// trace of its own.
func ChildTrace(parent Trace, runID string) Trace {
	if !parent.Valid() {
		return NewTrace(runID)
	}
	return Trace{TraceID: parent.TraceID, SpanID: hexOf("run", runID, 8), ParentSpanID: parent.SpanID}
}

// AttemptSpanID is the span id of attempt n of a step key of a run: any
// process computes the same one, so the process that reclaims an
// interrupted attempt reports the span the dead worker told its program
// about.
func AttemptSpanID(runID, stepKey string, n int) string {
	return hexOf("attempt", runID+"\x00"+stepKey+"\x00"+strconv.Itoa(n), 8)
}

// Traceparent is the W3C traceparent header value of span spanID of
// trace traceID, sampled.
func Traceparent(traceID, spanID string) string { return TraceparentFlags(traceID, spanID, true) }

// TraceparentFlags is Traceparent with the sampled flag as given: a
// program whose run's trace is not exported is told so.
func TraceparentFlags(traceID, spanID string, sampled bool) string {
	flags := "00"
	if sampled {
		flags = "01"
	}
	return "00-" + traceID + "-" + spanID + "-" + flags
}

// hexOf returns n bytes of SHA-256(domain, NUL, s) in hex, never all
// zero (an invalid id in W3C trace context).
func hexOf(domain, s string, n int) string {
	sum := sha256.Sum256([]byte(domain + "\x00" + s))
	b := sum[:n]
	zero := true
	for _, c := range b {
		zero = zero && c == 0
	}
	if zero {
		b[n-1] = 1
	}
	return hex.EncodeToString(b)
}
