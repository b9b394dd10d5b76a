package tracing

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// spanData is a finished span, as the exporter sends it. The tracer makes
// spans whole, at the end of what they stand for, with the ids the engine
// stored or derived, so it needs none of the SDK's span machinery (whose
// package and its dependencies every flowrun process paid for at start).
type spanData struct {
	name   string
	tid    trace.TraceID
	sid    trace.SpanID
	parent trace.SpanID // zero for a root; a parent is always remote here
	kind   trace.SpanKind
	start  time.Time
	end    time.Time
	attrs  []attribute.KeyValue
	code   codes.Code
	desc   string // the status message of an error
}

// sampler decides per trace id, exactly as the SDK's TraceIDRatioBased
// does (so processes of either kind keep or drop the same runs): the last
// 8 bytes of the id, shifted right by one, below ratio*2^63.
type sampler struct {
	all   bool
	bound uint64
}

func ratioSampler(ratio float64) sampler {
	if ratio >= 1 {
		return sampler{all: true}
	}
	if ratio <= 0 {
		return sampler{}
	}
	return sampler{bound: uint64(ratio * (1 << 63))}
}

func (s sampler) sampled(tid trace.TraceID) bool {
	return s.all || binary.BigEndian.Uint64(tid[8:16])>>1 < s.bound
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
func samplerFromEnv(getenv func(string) string) (sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	switch strings.TrimPrefix(name, "parentbased_") {
	case "", "always_on":
		return ratioSampler(1), nil
	case "always_off":
		return ratioSampler(0), nil
	case "traceidratio":
		ratio := 1.0
		if arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || r < 0 || r > 1 {
				return sampler{}, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1", arg)
			}
			ratio = r
		}
		return ratioSampler(ratio), nil
	}
	return sampler{}, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: flowrun knows always_on, always_off, traceidratio and their parentbased_ forms", name)
}
