package expr

import (
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/parser"
)

// The fast parser's tree reaches the checker without the proto detour
// (celnative.go): cel.Ast must still have the layout nativeAst builds, and
// the trees it hands over check, unparse and cost as the reference
// parser's do.
func TestNativeAstLayout(t *testing.T) {
	if !astLayoutOK {
		t.Fatal("cel.Ast no longer has the fields source, impl and loadErr at astLayout's offsets: fastParse takes the proto path; update celnative.go for this cel-go")
	}
	env, err := base()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"steps.s1.output.v + 1", "[1, 2].map(x, x * 2)", "input.a.exists(k, k == 'b') ? 'y' : \"n\"", ".input.a"} {
		a, ok := fastParse(env, src)
		if !ok {
			t.Fatalf("%q: the fast parser refused it", src)
		}
		if a.Source() == nil || a.NativeRep() == nil || a.IsChecked() {
			t.Fatalf("%q: the native Ast lacks its source or tree", src)
		}
		ref, iss := env.Parse(src)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		got, err1 := cel.AstToString(a)
		want, err2 := cel.AstToString(ref)
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("%q unparses as %q (%v), the reference's as %q (%v)", src, got, err1, want, err2)
		}
	}
	for _, n := range []int{100, 249, 250, 251, 300} {
		for _, open := range []string{"[", "{1: ", "f("} {
			close := map[string]string{"[": "]", "{1: ": "}", "f(": ")"}[open]
			a := mustParseNative(t, strings.Repeat(open, n)+"1"+strings.Repeat(close, n))
			if exceeds, may := celast.ExceedsDepth(a, nativeAstDepth), mayExceedDepth(a.Expr(), 0); exceeds && !may {
				t.Errorf("%d times %q: ExceedsDepth says deeper than %d, mayExceedDepth not", n, open, nativeAstDepth)
			} else if _, native := nativeAst(a, nil); exceeds && native || n == 100 && !native {
				t.Errorf("%d times %q: deeper than %d %v, native path %v", n, open, nativeAstDepth, exceeds, native)
			}
		}
	}
}

func mustParseNative(t *testing.T, src string) *celast.AST {
	t.Helper()
	p, err := parser.NewParser(parser.EnablePrattParser(true), parser.MaxRecursionDepth(1000))
	if err != nil {
		t.Fatal(err)
	}
	a, errs := p.Parse(common.NewTextSource(src))
	if errs != nil && len(errs.GetErrors()) > 0 {
		t.Fatal(errs.ToDisplayString())
	}
	return a
}

// Parsing a short expression allocates about half as much without the
// proto detour: the native path must be the one taken.
func TestFastParseAllocs(t *testing.T) {
	env, err := base()
	if err != nil {
		t.Fatal(err)
	}
	const src = "steps.s1.output.v + 1"
	allocs := func() float64 {
		return testing.AllocsPerRun(200, func() {
			if _, ok := fastParse(env, src); !ok {
				t.Fatal("the fast parser refused it")
			}
		})
	}
	native := allocs()
	astLayoutOK = false
	proto := allocs()
	astLayoutOK = true
	t.Logf("allocations per parse: %.0f native, %.0f through the proto", native, proto)
	if native > 60 || native > proto*2/3 {
		t.Errorf("parsing %q allocates %.0f times (%.0f through the proto), want at most 60", src, native, proto)
	}
}
