package lang

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// contentSchemas are the schemas content is called with.
var contentSchemas = map[string]*hcl.BodySchema{
	"exec": execSchema, "http": httpSchema, "sleep": sleepSchema, "wait": waitSchema,
	"workflow-action": childSchema, "fail": failSchema, "switch": switchSchema, "case": caseSchema,
	"schedule": scheduleSchema, "step": stepSchema, "retry": retrySchema, "foreach": foreachSchema,
	"webhook": webhookSchema, "file": fileSchema, "workflow": workflowSchema, "input": inputSchema,
	"secret": secretSchema, "concurrency": concurrencySchema, "defaults": defaultsSchema,
	"breaker": breakerSchema, "limits": limitsSchema, "output": outputSchema, "alert": alertSchema,
}

// TestFastContentMatchesContent: for every body of every file of
// examples, lang/testdata/valid and lang/testdata/invalid, against every
// schema content is called with, fastContent either declines or gives
// exactly what hclsyntax's Content gives, and only where Content reports
// nothing; on the step blocks of the valid files it does not decline.
func TestFastContentMatchesContent(t *testing.T) {
	var files []string
	for _, p := range []string{"../examples/*.hcl", "testdata/valid/*.hcl", "testdata/invalid/*.hcl"} {
		m, _ := filepath.Glob(p)
		files = append(files, m...)
	}
	if len(files) < 50 {
		t.Fatalf("only %d files found", len(files))
	}
	taken, steps := 0, 0
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		var visit func(b *hclsyntax.Body, typ string)
		visit = func(b *hclsyntax.Body, typ string) {
			for sname, schema := range contentSchemas {
				fast, ok := fastContent(b, schema)
				if !ok {
					continue
				}
				taken++
				ref, d := b.Content(schema)
				if len(d) > 0 {
					t.Fatalf("%s: %s body at %s with the %s schema: fastContent took a body Content reports: %v", name, typ, b.SrcRange, sname, d)
				}
				if !reflect.DeepEqual(fast, ref) {
					t.Fatalf("%s: %s body at %s with the %s schema: fastContent %#v, Content %#v", name, typ, b.SrcRange, sname, fast, ref)
				}
			}
			if typ == "step" && filepath.Base(filepath.Dir(name)) != "invalid" {
				if _, ok := fastContent(b, stepSchema); ok {
					steps++
				} else if _, d := b.Content(stepSchema); len(d) == 0 {
					t.Errorf("%s: step at %s: fastContent declined a step Content takes", name, b.SrcRange)
				}
			}
			for _, blk := range b.Blocks {
				visit(blk.Body, blk.Type)
			}
		}
		visit(f.Body.(*hclsyntax.Body), "file")
	}
	if taken < 100 || steps < 50 {
		t.Fatalf("fastContent took %d bodies, %d of them steps: too few to compare", taken, steps)
	}
}

// TestFastContentDeclinesHiddenBody: a body PartialContent returns hides
// what it took; fastContent leaves it to Content.
func TestFastContentDeclinesHiddenBody(t *testing.T) {
	f, diags := hclsyntax.ParseConfig([]byte("a = 1\nb = 2\n"), "x.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	schema := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "a"}, {Name: "b"}}}
	if _, ok := fastContent(f.Body, schema); !ok {
		t.Fatal("fastContent declined a fresh body the schema covers")
	}
	_, remain, _ := f.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "a"}}})
	if _, ok := fastContent(remain, schema); ok {
		t.Fatal("fastContent took a body that hides the attribute a")
	}
	if c, d := content(remain, schema); len(d) != 0 || len(c.Attributes) != 1 {
		t.Fatalf("content of the remaining body: %v %v", c.Attributes, d)
	}
}

// TestFastContentDeclinesWhatContentReports: a block with too few or too
// many labels, an unknown argument or block and a missing required
// argument are left to Content, which reports them.
func TestFastContentDeclinesWhatContentReports(t *testing.T) {
	required := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "a", Required: true}}}
	for _, c := range []struct {
		src    string
		schema *hcl.BodySchema
	}{
		{"workflow {\n}\n", fileSchema},
		{"workflow \"a\" \"b\" {\n}\n", fileSchema},
		{"nope = 1\n", fileSchema},
		{"nope {\n}\n", fileSchema},
		{"b = 1\n", required},
	} {
		f, diags := hclsyntax.ParseConfig([]byte(c.src), "x.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if _, ok := fastContent(f.Body, c.schema); ok {
			t.Errorf("fastContent took %q", c.src)
		}
		if _, d := content(f.Body, c.schema); !d.HasErrors() {
			t.Errorf("content reports nothing on %q", c.src)
		}
	}
}
