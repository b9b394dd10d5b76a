package irgen

import (
	"strings"
	"testing"
)

// src is a package with a root holding steps, a step with the given
// fields, an expression type, and extra declarations.
func src(fields string, extra ...string) []File {
	s := "package graph\n\n" +
		"//graph:gen root\ntype Graph struct {\n\tKey *Expr `json:\"key\" graph:\"slot=key,diff=-\"`\n\tSteps []*Step `json:\"steps\" graph:\"diff=-\"`\n}\n\n" +
		"// Step is a step.\n//\n//graph:gen hash scope\ntype Step struct {\n" + fields + "\n}\n\n" +
		"//graph:gen slab diff=whole\ntype Expr struct {\n\tCEL string `json:\"cel\"`\n\tType *Type `json:\"type\"`\n}\n\n" +
		strings.Join(extra, "\n")
	return []File{{Name: "graph.go", Src: []byte(s)}}
}

// TestGenerateRejects: a field or type the tags do not fully describe stops
// the generator with a message naming it.
func TestGenerateRejects(t *testing.T) {
	cases := map[string]string{
		"Name string `json:\"name\"`":                                  "Step.Name: the graph tag needs def, run or self",
		"Name string `json:\"name\" graph:\"def\"`":                    "Step.Name: the graph tag needs diff=",
		"Name string `json:\"name\" graph:\"diff=-\"`":                 "needs def, run or self",
		"Name string `json:\"name\" graph:\"def,often,diff=-\"`":       `unknown graph tag option "often"`,
		"Name string `json:\"name\" graph:\"def,diff=huge:name\"`":     "diff=huge:name is not a diff spec",
		"Name string `json:\"name\" graph:\"def,diff=cel:major\"`":     "diff=cel:major is not a diff spec",
		"Name string `json:\"name\" graph:\"def,diff=or:patch:name\"`": "diff=or:patch:name is not a diff spec",
		"Name float32 `json:\"name\" graph:\"def,diff=-\"`":            "Step.Name: no decoder for type float32",
		"Name string": "Step.Name has no tags",
		"Name string `json:\"-\" graph:\"def,diff=-\"`":      "is not a key",
		"Tags []string `json:\"tags\" graph:\"def,diff=-\"`": "a []string is a set",
		"Name int `json:\"name\" graph:\"def,mode,diff=-\"`": "mode is for strings",
		"When *Expr `json:\"when\" graph:\"def,diff=-\"`":    "Step.When holds expressions and no slot=",
		"Retry *Retry `json:\"retry\" graph:\"run,diff=-\"`": "the struct Retry has no //graph:gen directive",
	}
	for field, want := range cases {
		_, err := Generate(src(field, "type Retry struct{}\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want one containing %q", field, err, want)
		}
	}
	types := map[string]string{
		"//graph:gen often\ntype Limits struct{}\n":                                                     `unknown //graph:gen option "often"`,
		"//graph:gen diff=whole\ntype Limits struct {\n\tN int `json:\"n\" graph:\"diff=-\"`\n}\n":      "Limits is compared whole; its fields take no diff=",
		"//graph:gen diff=parts\ntype Limits struct {\n\tN int `json:\"n\" graph:\"diff=a:b\"`\n}\n":    "diff=a:b is not a parts spec",
		"//graph:gen diff=parts\ntype Limits struct {\n\tN int `json:\"n\" graph:\"diff=with:M\"`\n}\n": "diff=with:M names no other field",
		"//graph:gen\ntype Limits struct {\n\tN int `json:\"n\" graph:\"def,diff=-\"`\n}\n":             "def, run and self are for types with hash",
	}
	for decl, want := range types {
		_, err := Generate(src("L Limits `json:\"l\" graph:\"run,diff=-\"`", decl))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want one containing %q", decl, err, want)
		}
	}
	both := "L Limits `json:\"l\" graph:\"run,diff=-\"`\nP *Limits `json:\"p\" graph:\"run,diff=-\"`"
	if _, err := Generate(src(both, "//graph:gen diff=whole\ntype Limits struct{}\n")); err == nil || !strings.Contains(err.Error(), "Limits is held both as") {
		t.Errorf("a type held by value and by pointer: error %v", err)
	}
	if _, err := Generate([]File{{Name: "x.go", Src: []byte("package graph\n")}}); err == nil || !strings.Contains(err.Error(), "no type has a //graph:gen directive") {
		t.Errorf("no types: error %v", err)
	}
}

// TestGenerateField: a field's tags become its place in the hash, its
// decoder, its walks, its comparison and its expressions' slot.
func TestGenerateField(t *testing.T) {
	_, err := Generate(src("Name string `json:\"name\" graph:\"def,diff=-\"`\n"+
		"Mode string `json:\"mode\" graph:\"def,mode,diff=major:mode\"`\n"+
		"Wait int64 `json:\"wait_ms,omitempty\" graph:\"run,diff=ms:patch:wait\"`\n"+
		"Tags []string `json:\"tags,omitempty\" graph:\"def,set,diff=same:minor:tags\"`\n"+
		"When *Expr `json:\"when,omitempty\" graph:\"def,slot=when,diff=cel:major:when\"`\n"+
		"Retry *Retry `json:\"retry,omitempty\" graph:\"run,diff=fn:retry\"`\n"+
		"internal int",
		"//graph:gen diff=parts\ntype Retry struct {\n"+
			"\tAttempts int `json:\"attempts\" graph:\"diff=attempts\"`\n"+
			"\tBackoff int64 `json:\"backoff_ms\" graph:\"diff=ms:backoff\"`\n"+
			"\tCap int64 `json:\"cap_ms\" graph:\"diff=with:Backoff\"`\n"+
			"\tWhen *Expr `json:\"when\" graph:\"slot=retry_when,diff=cel:when\"`\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "only a fn: spec compares fields together") {
		t.Fatalf("with: on a field whose spec is not fn: error %v", err)
	}
	out, err := Generate(src("Name string `json:\"name\" graph:\"def,diff=-\"`\n"+
		"Mode string `json:\"mode\" graph:\"def,mode,diff=major:mode\"`\n"+
		"Wait int64 `json:\"wait_ms,omitempty\" graph:\"run,diff=ms:patch:wait\"`\n"+
		"Tags []string `json:\"tags,omitempty\" graph:\"def,set,diff=same:minor:tags\"`\n"+
		"When *Expr `json:\"when,omitempty\" graph:\"def,slot=when,diff=cel:major:when\"`\n"+
		"Retry *Retry `json:\"retry,omitempty\" graph:\"run,diff=fn:retry\"`\n"+
		"internal int",
		"//graph:gen diff=parts\ntype Retry struct {\n"+
			"\tAttempts int `json:\"attempts\" graph:\"diff=attempts\"`\n"+
			"\tBackoff int64 `json:\"backoff_ms\" graph:\"diff=ms:backoff\"`\n"+
			"\tWhen *Expr `json:\"when\" graph:\"slot=retry_when,diff=cel:when\"`\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(strings.Fields(string(out)), " ") // gofmt aligns fields
	for _, want := range []string{
		"Name string `json:\"name\"`",
		"Mode string `json:\"mode\"`",
		"Tags []string `json:\"tags,omitempty\"`",
		"return stepDef{x.Name, x.Mode, x.Tags, x.When}",
		`case "mode": d.seen(&set, 1<<1) x.Mode = d.mode()`,
		"x.Wait = d.int64()",
		"x.Retry = d.retry()",
		`case "attempts": d.seen(&set, 1<<0) x.Attempts = d.int()`,
		"d.names(&x.Tags, false)",
		"n.names(&x.Tags, false)",
		"n.retry(x.Retry)",
		"x.Mode = modeString(x.Mode)",
		`d.add(path, BumpMajor, "mode changed (%v → %v)", o.Mode, n.Mode)`,
		`d.add(path, BumpPatch, "wait changed (%s → %s)", diffMS(o.Wait), diffMS(n.Wait))`,
		`d.add(path, BumpMinor, "tags changed")`,
		"d.retry(path, o.Retry, n.Retry)",
		`parts = append(parts, fmt.Sprintf("attempts %v → %v", o.Attempts, n.Attempts))`,
		`parts = append(parts, "backoff "+diffMS(o.Backoff)+" → "+diffMS(n.Backoff))`,
		`fn(x.When, s, "when")`,
		`fn(x.When, s, "retry_when")`,
		"s := x",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the generated code lacks %q", want)
		}
	}
	if strings.Contains(s, "Wait int64 `json") {
		t.Error("a run field is in the hash's view of a step")
	}
	if strings.Contains(s, "x.internal") {
		t.Error("an unexported field is described")
	}
}
