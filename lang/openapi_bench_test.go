package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// bigOpenAPI writes an OpenAPI document of about size bytes: n paths, each
// with a GET whose path parameter, query parameters and response schema
// (an object of a dozen described fields) are written out, the way
// generated documents are.
func bigOpenAPI(size int) []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo:\n  title: Big\n  version: 1.0.0\nservers:\n  - url: http://127.0.0.1:9/v1\npaths:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  /things%d/{id}:\n    get:\n      operationId: getThing%d\n      summary: Get thing %d by its id, with every field of it.\n", i, i, i)
		b.WriteString("      parameters:\n        - name: id\n          in: path\n          required: true\n          schema:\n            type: integer\n")
		b.WriteString("        - name: fields\n          in: query\n          schema:\n            type: string\n            enum: [all, some, none]\n")
		b.WriteString("      responses:\n        '200':\n          description: The thing.\n          content:\n            application/json:\n              schema:\n                type: object\n                required: [id, name]\n                properties:\n")
		for f := 0; f < 12; f++ {
			fmt.Fprintf(&b, "                  field%d:\n                    type: string\n                    description: Field %d of the thing, as the service keeps it.\n", f, f)
		}
		b.WriteString("                  id:\n                    type: integer\n                  name:\n                    type: string\n")
	}
	return []byte(b.String())
}

// openapiBenchWorkflow is a 50-step chain whose first step calls an
// operation of big.yaml (withDoc) or makes the same request as an http
// action.
func openapiBenchWorkflow(withDoc bool) []byte {
	chain := string(testsrc.Chain(50))
	first := `  step "thing" {
    http { url = "http://127.0.0.1:9/v1/things7/{{ input.limit }}" }
  }
`
	if withDoc {
		first = `  step "thing" {
    openapi {
      document   = "big.yaml"
      operation  = "getThing7"
      parameters = { id = "{{ input.limit }}", fields = "all" }
    }
  }
`
	}
	i := strings.Index(chain, "  step ")
	return []byte(chain[:i] + first + chain[i:])
}

// BenchmarkCompileOpenAPI compiles a workflow whose step calls an
// operation of a 1 MB OpenAPI document (doc), and the same workflow with
// an http step instead (http): the difference is what reading, validating
// and indexing the document costs (the target: under 200 ms more).
func BenchmarkCompileOpenAPI(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), bigOpenAPI(1<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, withDoc := range []bool{false, true} {
		name := "http"
		if withDoc {
			name = "doc"
		}
		wf := filepath.Join(dir, name+".hcl")
		if err := os.WriteFile(wf, openapiBenchWorkflow(withDoc), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			cpu := testsrc.ProcessCPU()
			for i := 0; i < b.N; i++ {
				_, diags := LoadPaths([]string{wf})
				if diags.HasErrors() {
					b.Fatal(diags)
				}
			}
			testsrc.ReportCPU(b, cpu)
		})
	}
}

// The benchmark's workflows compile, and the document is the size it says.
func TestOpenAPIBenchWorkflows(t *testing.T) {
	doc := bigOpenAPI(1 << 20)
	if len(doc) < 1<<20 || len(doc) > MaxOpenAPIDocument {
		t.Fatalf("document of %d bytes", len(doc))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.yaml"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, withDoc := range []bool{false, true} {
		wf := filepath.Join(dir, "wf.hcl")
		if err := os.WriteFile(wf, openapiBenchWorkflow(withDoc), 0o644); err != nil {
			t.Fatal(err)
		}
		m, diags := LoadPaths([]string{wf})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		g := m.Workflows[0].Graph
		if st := stepOf(t, g, "thing"); (st.Action.HTTP.OpenAPI != nil) != withDoc || len(g.Steps) != 51 {
			t.Fatalf("thing: %+v of %d steps", st.Action.HTTP, len(g.Steps))
		}
	}
}
