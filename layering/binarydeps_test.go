package layering

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutHeavyPackages: the flowrun binary does not link
// packages that cost every process their package inits and pages while
// only tests need them: gRPC (which the SDK's OTLP exporter brought in
// through the collector's generated service), the generated
// opentelemetry-proto messages (the exporter writes the wire format with
// protowire), the SDK's span pipeline (telemetry/tracing makes and batches
// its spans itself), and net/http/httptest (which registers a flag and a
// test certificate). Tests may import any of them.
func TestBinaryLeavesOutHeavyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/cmd/flowrun").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, d := range deps {
		for _, banned := range []string{"google.golang.org/grpc", "github.com/grpc-ecosystem/", "go.opentelemetry.io/proto/",
			"go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/otel/sdk/trace", "net/http/httptest"} {
			if d == banned || strings.HasPrefix(d, strings.TrimSuffix(banned, "/")+"/") {
				t.Errorf("cmd/flowrun links %s", d)
			}
		}
	}
}
