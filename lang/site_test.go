package lang

import (
	"slices"
	"strings"
	"testing"
)

const siteSrc = `workflow "w" {
  version = "1.0.0"
  input "amount" { type = number }
  secret "tok" { env = "TOK" }
  breaker "pay" {
    failures = 3
    cooldown = "30s"
  }
  step "build" {
    exec { command = ["make"] }
  }
  step "charge" {
    when       = "input.amount > 0 && steps.build.output.exit_code == 0"
    depends_on = [step.build]
    breaker    = breaker.pay
    http {
      url  = "https://x/{{ steps.build.output.stdout }}/{{ secrets.tok }}"
    }
  }
}
`

// at returns the offset of the n-th byte after the first occurrence of
// marker in src.
func at(t *testing.T, src, marker string, n int) int {
	t.Helper()
	i := strings.Index(src, marker)
	if i < 0 {
		t.Fatalf("marker %q not in source", marker)
	}
	return i + n
}

func refNames(r Ref) []string {
	var out []string
	for _, p := range r.Parts {
		out = append(out, p.Name)
	}
	return out
}

func TestSiteAt(t *testing.T) {
	body, diags := ParseSyntax("w.hcl", []byte(siteSrc))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		name    string
		offset  int
		types   []string
		attr    string
		control bool
		inCEL   bool
		ref     []string
		cursor  int
		prefix  string
		static  bool
	}{
		{"control chain, on output", at(t, siteSrc, "steps.build.output.exit_code", 14), []string{"workflow", "step"}, "when", true, true,
			[]string{"steps", "build", "output"}, 2, "ou", false},
		{"control, on input", at(t, siteSrc, "input.amount >", 7), []string{"workflow", "step"}, "when", true, true,
			[]string{"input", "amount"}, 1, "a", false},
		{"template part", at(t, siteSrc, "steps.build.output.stdout", 6), []string{"workflow", "step", "http"}, "url", false, true,
			[]string{"steps", "build"}, 1, "", false},
		{"template secret", at(t, siteSrc, "secrets.tok", 9), []string{"workflow", "step", "http"}, "url", false, true,
			[]string{"secrets", "tok"}, 1, "t", false},
		{"template literal text", at(t, siteSrc, "https://x/", 3), []string{"workflow", "step", "http"}, "url", false, false, nil, 0, "", false},
		{"static step ref", at(t, siteSrc, "[step.build]", 7), []string{"workflow", "step"}, "depends_on", false, false,
			[]string{"step", "build"}, 1, "b", true},
		{"static breaker ref", at(t, siteSrc, "breaker.pay\n", 9), []string{"workflow", "step"}, "breaker", false, false,
			[]string{"breaker", "pay"}, 1, "p", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := SiteAt(body, []byte(siteSrc), tc.offset)
			if got := s.Types(); !slices.Equal(got, tc.types) {
				t.Fatalf("blocks %v, want %v", got, tc.types)
			}
			if s.Attr == nil || s.Attr.Name != tc.attr {
				t.Fatalf("attr %v, want %s", s.Attr, tc.attr)
			}
			if s.Control != tc.control || s.InCEL != tc.inCEL {
				t.Fatalf("control %v inCEL %v, want %v %v", s.Control, s.InCEL, tc.control, tc.inCEL)
			}
			if got := refNames(s.Ref); !slices.Equal(got, tc.ref) {
				t.Fatalf("ref %v, want %v", got, tc.ref)
			}
			if len(tc.ref) > 0 && (s.Ref.Cursor != tc.cursor || s.Ref.Prefix != tc.prefix || s.Ref.Static != tc.static) {
				t.Fatalf("cursor %d prefix %q static %v, want %d %q %v", s.Ref.Cursor, s.Ref.Prefix, s.Ref.Static, tc.cursor, tc.prefix, tc.static)
			}
			for _, p := range s.Ref.Parts {
				if siteSrc[p.Start:p.End] != p.Name {
					t.Fatalf("part %q has range text %q", p.Name, siteSrc[p.Start:p.End])
				}
			}
		})
	}
}

func TestSiteAtHeaderAndName(t *testing.T) {
	body, _ := ParseSyntax("w.hcl", []byte(siteSrc))
	s := SiteAt(body, []byte(siteSrc), at(t, siteSrc, `step "charge"`, 2))
	if len(s.Blocks) != 2 || !s.Blocks[1].InHeader || s.Label("step") != "charge" {
		t.Fatalf("header site: %+v", s.Blocks)
	}
	s = SiteAt(body, []byte(siteSrc), at(t, siteSrc, "cooldown", 3))
	if s.Attr == nil || s.Attr.Name != "cooldown" || !s.OnName {
		t.Fatalf("name site: %+v", s)
	}
}

// A file that does not parse still gives the blocks that were recovered,
// and one that nests too deep is not handed to hclsyntax.
func TestSiteAtPartial(t *testing.T) {
	src := "workflow \"w\" {\n  step \"a\" {\n    when = \"steps.\n"
	body, diags := ParseSyntax("w.hcl", []byte(src))
	if !diags.HasErrors() {
		t.Fatal("want syntax errors")
	}
	for off := 0; off <= len(src); off++ {
		SiteAt(body, []byte(src), off) // must not panic
	}
	deep := strings.Repeat("[", 100000)
	body, diags = ParseSyntax("d.hcl", []byte("workflow \"w\" { x = "+deep+" }"))
	if !diags.HasErrors() || len(body.Blocks) != 0 {
		t.Fatalf("deep file: %v, %d blocks", diags, len(body.Blocks))
	}
	if _, diags = ParseSyntax("b.hcl", []byte{'w', 0xff}); !diags.HasErrors() {
		t.Fatal("invalid UTF-8 accepted")
	}
}

func TestScopeAt(t *testing.T) {
	mod, diags := LoadFile("w.hcl", []byte(siteSrc))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := mod.Workflows[0].Graph
	body, _ := ParseSyntax("w.hcl", []byte(siteSrc))
	when := SiteAt(body, []byte(siteSrc), at(t, siteSrc, "input.amount >", 2))
	sc := ScopeAt(g, when)
	if sc == nil || sc.Steps["build"] == nil || sc.Secrets != nil {
		t.Fatalf("when scope: %+v", sc)
	}
	url := SiteAt(body, []byte(siteSrc), at(t, siteSrc, "secrets.tok", 2))
	if sc := ScopeAt(g, url); sc == nil || !slices.Contains(sc.Secrets, "tok") {
		t.Fatalf("http data scope: %+v", sc)
	}
	ver := SiteAt(body, []byte(siteSrc), at(t, siteSrc, `"1.0.0"`, 2))
	if sc := ScopeAt(g, ver); sc != nil {
		t.Fatalf("version has a scope: %+v", sc)
	}
}

func TestSchemaOf(t *testing.T) {
	s, ok := SchemaOf([]string{"workflow", "step", "retry"})
	if !ok || !slices.Contains(s.Attributes, "attempts") || !slices.Contains(s.Attributes, "when") {
		t.Fatalf("retry: %+v %v", s, ok)
	}
	s, ok = SchemaOf([]string{"workflow", "step"})
	if !ok || !slices.Contains(s.Attributes, "depends_on") || !slices.ContainsFunc(s.Blocks, func(b BlockType) bool { return b.Type == "exec" }) {
		t.Fatalf("step: %+v", s)
	}
	s, ok = SchemaOf([]string{"workflow", "step", "workflow"})
	if !ok || !slices.Equal(s.Required, []string{"name", "version"}) {
		t.Fatalf("child workflow action: %+v", s)
	}
	if s, ok = SchemaOf([]string{"workflow", "step", "set"}); !ok || !s.Free {
		t.Fatalf("set: %+v", s)
	}
	if s, ok = SchemaOf(nil); !ok || len(s.Blocks) != 1 || s.Blocks[0] != (BlockType{"workflow", 1}) {
		t.Fatalf("top: %+v", s)
	}
	// Every block the decoder accepts anywhere resolves.
	var walk func(path []string)
	walk = func(path []string) {
		s, ok := SchemaOf(path)
		if !ok {
			t.Fatalf("SchemaOf(%v) not ok", path)
		}
		for _, b := range s.Blocks {
			walk(append(slices.Clone(path), b.Type))
		}
	}
	walk(nil)
	for _, bad := range [][]string{{"step"}, {"workflow", "retry"}, {"workflow", "step", "set", "x"}, {"workflow", "nope"}} {
		if _, ok := SchemaOf(bad); ok {
			t.Errorf("SchemaOf(%v) ok", bad)
		}
	}
}
