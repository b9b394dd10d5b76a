package expr

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// quickCorpus is every {{ }} expression of the examples, lang's test files,
// the conformance cases, the command's scripts and the fuzz corpora, with
// expressions written to meet and miss quickExpr's edges.
func quickCorpus(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, p := range []string{"../../examples/*.hcl", "../testdata/*/*.hcl", "../../spec/testdata/*.txtar", "../../cmd/flowrun/testdata/*/*.txtar", "../testdata/fuzz/*/*", "testdata/fuzz/*/*"} {
		m, _ := filepath.Glob(p)
		files = append(files, m...)
	}
	if len(files) < 100 {
		t.Fatalf("only %d files found", len(files))
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	inner := regexp.MustCompile(`\{\{(.*?)\}\}`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasPrefix(text, "go test fuzz") {
			for _, line := range strings.Split(text, "\n") {
				if s, ok := strings.CutPrefix(line, "string("); ok {
					if u, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
						add(u)
						text += "\n" + u
					}
				}
			}
		}
		for _, m := range inner.FindAllStringSubmatch(text, -1) {
			add(m[1])
		}
	}
	for _, s := range []string{
		"steps.s41.output.v + 1", " input.name ", "input", "steps.a", "steps", "secrets.token", "run.id",
		"a.b.c.d", "x", "_x.y_1", "1", "0", "123456789012345678", "1234567890123456789", "9223372036854775807",
		"a + b", "a - 1", "a * 2", "a / 3", "a % 4", "a == b", "a != 1", "a < b", "a <= b", "a > 2", "a >= 3",
		"1 + 2", "steps.a.output.n < input.limit", "input.n+1", "a+1", "a-1", "a -1", "a - -1", "a +1", "a /1",
		"a + b + c", "a && b", "a || b", "!a", "-1", "a.b()", "f(x)", "has(a.b)", "a[0]", "a['x']", "'x'", `"x"`,
		"1u", "1.5", "0x1F", "01", "1e3", "true", "false", "null", "a.true", "in", "a in b", "a.in", "for.x",
		"a.b .c", "a. b", "a .b", "a\t+ 1", "a\n+ 1", "a // c", "a /* c */", "a ? b : c", "a.?b", ".a", "a.",
		"a +", "+ a", "", "  ", "a b", "a == = b", "a <> b", "a === b", "ü", "a.ü", "a.1",
		"steps.a-b", "steps.a-b.c", "a.b-1", "a.as", "as", "steps.in.x", "void.x", "1 == 1", "a == 0", "0 + 0", "a*-1",
		"a%b", "_ == _", "a\r", "a ==b", "a== b", "a  +  b", "a.b.c.d.e.f.g.h", "a.b.c.d.e.f.g.h.i", "int", "dyn(a)", "type",
	} {
		add(s)
	}
	return out
}

// referenceShed is what parsing src and shedding its tree gives.
func referenceShed(src string, loc ExprLoc) (*ParsedExpr, bool) {
	p, diags := ParseSourceExprAt(src, loc)
	if diags.HasErrors() || p == nil {
		return nil, false
	}
	p.keepShape()
	p.ast = nil
	return p, true
}

func checkQuickExpr(t *testing.T, src string) bool {
	t.Helper()
	loc := ExprLoc{Content: "{{" + src + "}}", Rng: hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: 2, Column: 3, Byte: 9}}, off: 2}
	got, ok := quickExpr(src, loc)
	if !ok {
		return false
	}
	want, parsed := referenceShed(src, loc)
	if !parsed {
		t.Errorf("%q: quickExpr took an expression the parser refuses", src)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q: quickExpr gives %+v %+v, parsing and shedding %+v %+v", src, got, got.shape, want, want.shape)
	}
	return true
}

// TestQuickExprMatchesParser: wherever quickExpr reads an expression of
// the corpus, it gives what parsing and shedding it gives (references with
// their ids, shape and canonical text), and only where it parses; it reads
// the plain ones.
func TestQuickExprMatchesParser(t *testing.T) {
	taken := 0
	for _, src := range quickCorpus(t) {
		if checkQuickExpr(t, src) {
			taken++
		}
	}
	for _, src := range []string{"steps.s41.output.v + 1", " input.name ", "a.b.c.d", "1", "a <= b", "steps.a.output.n < input.limit", "a /1"} {
		if _, ok := quickExpr(src, ExprLoc{Content: src}); !ok {
			t.Errorf("%q: declined", src)
		}
	}
	for _, src := range []string{"a + b + c", "a.b()", "1u", "01", "a.true", "a\t+ 1", "'x'", "a -1", "a // c", "1234567890123456789"} {
		if _, ok := quickExpr(src, ExprLoc{Content: src}); ok {
			t.Errorf("%q: taken", src)
		}
	}
	if taken < 40 {
		t.Errorf("quickExpr took %d expressions: too few to compare", taken)
	}
}

// TestParseTemplateShed: ParseTemplateShed gives what ParseTemplate and
// Shed give, and reads the template chain's expressions without parsing.
func TestParseTemplateShed(t *testing.T) {
	rng := hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: 4, Column: 9, Byte: 40}, End: hcl.Pos{Line: 4, Column: 40, Byte: 71}}
	for _, src := range []string{
		"{{ steps.s41.output.v + 1 }}", "a {{ input.name }} b {{ steps.x.output }}{{1}}", "{{ a + b + c }} and {{ x }}",
		"no template", "{{ has(input.x) ? 1 : 2 }}", "{{ steps.a.output.list[0] }}",
	} {
		want, wd := ParseTemplate(src, rng)
		if want != nil {
			want.Shed()
		}
		got, gd := ParseTemplateShed(src, rng)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gd, wd) {
			t.Errorf("%q: ParseTemplateShed gives %+v %v, ParseTemplate and Shed %+v %v", src, got, gd, want, wd)
		}
	}
	saved := quickTaken
	defer func() { quickTaken = saved }()
	n := 0
	quickTaken = func() { n++ }
	if _, d := ParseTemplateShed("{{ steps.s41.output.v + 1 }}", rng); d.HasErrors() || n != 1 {
		t.Errorf("the chain's template was parsed (%d read quickly): %v", n, d)
	}
}

// FuzzQuickExpr: wherever quickExpr reads a text, parsing and shedding it
// gives the same.
func FuzzQuickExpr(f *testing.F) {
	for _, s := range quickCorpus(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkQuickExpr(t, src)
	})
}

// TestQuickExprAllocs: reading the chain's template expression allocates
// twice: the parsed expression with its references, shape and steps
// names, and the shape's key (its canonical text is its source).
func TestQuickExprAllocs(t *testing.T) {
	loc := ExprLoc{Content: "{{ steps.s41.output.v + 1 }}", off: 2}
	n := testing.AllocsPerRun(100, func() {
		if _, ok := quickExpr(" steps.s41.output.v + 1 ", loc); !ok {
			t.Fatal("declined")
		}
	})
	if n > 2 {
		t.Errorf("quickExpr allocates %v times, want at most 2", n)
	}
}
