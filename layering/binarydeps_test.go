package layering

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutHeavyPackages: the flowrun and flowtui binaries do
// not link packages that cost every process their package inits and
// pages while only tests need them: gRPC (which the SDK's OTLP exporter
// brought in through the collector's generated service), the generated
// opentelemetry-proto messages (the exporter writes the wire format with
// protowire), the SDK's span pipeline (telemetry/tracing makes and batches
// its spans itself), net/http/httptest (which registers a flag and a test
// certificate), and kin-openapi with the JSON Schema validator and YAML
// v4 it brings (lang reads OpenAPI documents with lang/openapi; server's
// tests validate the API with kin-openapi). Tests may import any of them.
func TestBinaryLeavesOutHeavyPackages(t *testing.T) {
	for _, bin := range []string{"cmd/flowrun", "cmd/flowtui"} {
		out, err := exec.Command("go", "list", "-deps", module+"/"+bin).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", bin, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 100 {
			t.Fatalf("go list -deps %s listed %d packages", bin, len(deps))
		}
		for _, d := range deps {
			for _, banned := range []string{"google.golang.org/grpc", "github.com/grpc-ecosystem/", "go.opentelemetry.io/proto/",
				"go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/otel/sdk/trace", "net/http/httptest",
				"github.com/getkin/kin-openapi/", "github.com/santhosh-tekuri/jsonschema/", "go.yaml.in/yaml/v4"} {
				if d == banned || strings.HasPrefix(d, strings.TrimSuffix(banned, "/")+"/") {
					t.Errorf("%s links %s", bin, d)
				}
			}
		}
	}
}
