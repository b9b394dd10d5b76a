package expr_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// parseSeeds are expressions covering the grammar: every operator and
// literal form, macros (standard and extension), escapes, unicode and
// deep nesting.
var parseSeeds = []string{
	`steps.s12.output.n < input.limit`,
	`steps.s12.output.n + 1`,
	`[1, 2, 3].map(x, x * 2).exists(y, y > 3) && has(input.a.b)`,
	`input.name.startsWith('a') ? 'x' : "y\n"`,
	`{"a": 1, 'b': [true, false, null]}["a"] == 1u`,
	`-1.5e3 != 2.0 || !(3 % 2 == 1) && 4 / 2 >= 2`,
	`r"raw\n" + '''triple ' quote''' + """x"""`,
	`b"\x00\xff".size() > 0 && "é∂" != "\u00e9"`,
	`input.items.filter(i, i.ok).all(i, i.n in [1, 2])`,
	`math.greatest(1, 2, 3) + math.least([1.0, 2.0])`,
	`input.list.exists_one(x, x == 2) ? size(input.list) : 0`,
	`input.m[input.k].x.y.z`,
	`int("12") + uint(3) + double(2) > 0.5`,
	`a.b.c(d, e.f(g))`,
	`((((((1))))))`,
	`1 < 2 < 3`,
	`.a.b`,
	`r(i, i.ok).all(.i,n in[1,])`,
	`[1, 2].map(.x, .x * 2)`,
	"\"é∂\" + . a + .// note\n\tb",
	"1 +\n  .a.b[.c]",
	`.f(1) + .g.h(.i)`,
	`.a.B{c: 1}`,
	`{"k": .a}.k`,
	`dyn(1) == 1`,
	`timestamp("2020-01-01T00:00:00Z") < timestamp("2021-01-01T00:00:00Z")`,
	`0x1F + 0x1Fu`,
	`-9223372036854775808`,
	`"a" "b"`,
	`1 +`,
	`a..b`,
	`'unterminated`,
	`[1, 2,]`,
	`{1: 2,}`,
	`x.all(1, true)`,
	`has(a)`,
	`a.?b`,
	`1 = 2`,
	`a ? b`,
	"`x`",
	`18446744073709551616u`,
	`"\q"`,
	`in`,
	`x.in`,
	`0X1F`,
}

// TestFastParseMatchesReference checks that the Pratt parser flowrun uses
// for speed gives the same AST as cel-go's reference parser, and rejects
// what it rejects.
func TestFastParseMatchesReference(t *testing.T) {
	env, err := expr.Base()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range parseSeeds {
		if err := compareParsers(src); err != "" {
			t.Error(err)
		}
		// Every seed the reference parser accepts takes the fast path,
		// the root-scoped (.a) ones included.
		_, iss := env.Parse(src)
		if _, ok := expr.FastParse(env, src); iss.Err() == nil && !ok {
			t.Errorf("%s did not take the fast path", quote(src))
		}
	}
}

func FuzzFastParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if err := compareParsers(src); err != "" {
			t.Error(err)
		}
	})
}

func compareParsers(src string) string {
	env, err := expr.Base()
	if err != nil {
		return err.Error()
	}
	ref, iss := env.Parse(src)
	fast, ok := expr.FastParse(env, src)
	if iss.Err() != nil {
		if ok {
			return "fast parser accepted " + quote(src) + ", the reference parser rejects it: " + iss.Err().Error()
		}
		return ""
	}
	if !ok {
		return "" // declined: the caller parses with the reference parser
	}
	a, err := cel.AstToParsedExpr(ref)
	if err != nil {
		return err.Error()
	}
	b, err := cel.AstToParsedExpr(fast)
	if err != nil {
		return err.Error()
	}
	if a.String() != b.String() {
		return "parsers differ on " + quote(src) + ":\nreference: " + a.String() + "\nfast:      " + b.String()
	}
	return ""
}

func quote(s string) string { return "`" + s + "`" }

// exampleExprs returns the CEL of every control expression and template
// part in the workflows of examples/*.hcl (not their *.test.hcl files), in canonical form: the
// expressions a real workflow hands the parser.
func exampleExprs(tb testing.TB) []string {
	files, err := filepath.Glob("../../examples/*.hcl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no examples: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["cel"].(string); ok {
				out = append(out, s)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, name := range files {
		if strings.HasSuffix(name, lang.TestFileSuffix) {
			continue // a test file (flowrun test), not a workflow
		}
		src, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		m, diags := lang.LoadFile(name, src)
		if diags.HasErrors() {
			tb.Fatalf("%s: %v", name, diags)
		}
		for _, w := range m.Workflows {
			j, err := json.Marshal(w.Graph)
			if err != nil {
				tb.Fatal(err)
			}
			var g any
			if err := json.Unmarshal(j, &g); err != nil {
				tb.Fatal(err)
			}
			walk(g)
		}
	}
	if len(out) < 20 {
		tb.Fatalf("only %d expressions in the examples", len(out))
	}
	return out
}

// TestExampleExprsTakeFastPath checks that the examples' expressions, the
// ones BenchmarkCELParse measures, take the fast path and agree with the
// reference parser.
func TestExampleExprsTakeFastPath(t *testing.T) {
	env, err := expr.Base()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range exampleExprs(t) {
		if _, ok := expr.FastParse(env, src); !ok {
			t.Errorf("%s did not take the fast path", quote(src))
		}
		if err := compareParsers(src); err != "" {
			t.Error(err)
		}
	}
}

// BenchmarkCELParse parses every expression of examples/*.hcl once per op,
// with the fast path (the Pratt parser and the conversion to a cel.Ast) and
// with cel-go's reference parser (cel.Env.Parse). The ratio of the two is
// what the fast path saves; spec/language.md states it as measured.
// cpu-ms/op (the process's processor time) is the steadier figure on a
// busy machine.
func BenchmarkCELParse(b *testing.B) {
	env, err := expr.Base()
	if err != nil {
		b.Fatal(err)
	}
	exprs := exampleExprs(b)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		cpu := testsrc.ProcessCPU()
		for b.Loop() {
			for _, src := range exprs {
				if _, ok := expr.FastParse(env, src); !ok {
					b.Fatalf("%s left the fast path", quote(src))
				}
			}
		}
		testsrc.ReportCPU(b, cpu)
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		cpu := testsrc.ProcessCPU()
		for b.Loop() {
			for _, src := range exprs {
				if _, iss := env.Parse(src); iss.Err() != nil {
					b.Fatal(iss.Err())
				}
			}
		}
		testsrc.ReportCPU(b, cpu)
	})
}
