package tracing

import (
	"context"
	"math/rand/v2"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestSamplerMatchesSDK: the sampler keeps exactly the trace ids the
// SDK's TraceIDRatioBased keeps, at every ratio, so a process of this
// version and one of the version before (which used the SDK) keep or drop
// the same runs.
func TestSamplerMatchesSDK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ratio := range []float64{0, 1e-9, 0.001, 0.1, 0.25, 0.5, 0.75, 0.999, 1} {
		ours, sdk := ratioSampler(ratio), sdktrace.TraceIDRatioBased(ratio)
		kept := 0
		for i := range 5000 {
			var tid trace.TraceID
			for j := range tid {
				tid[j] = byte(rng.Uint32())
			}
			if i == 0 {
				tid = trace.TraceID{15: 1} // the ends of the range the ratio cuts
			} else if i == 1 {
				for j := range tid {
					tid[j] = 0xff
				}
			}
			want := sdk.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: tid}).Decision == sdktrace.RecordAndSample
			if got := ours.sampled(tid); got != want {
				t.Fatalf("ratio %g, trace %s: sampled %v, the SDK says %v", ratio, tid, got, want)
			}
			if want {
				kept++
			}
		}
		if ratio >= 0.001 && ratio < 1 && kept == 0 {
			t.Errorf("ratio %g kept none of 5000", ratio)
		}
	}
}
