package graph_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/graph/internal/irgen"
)

// irTypes returns the generated types of the IR by name, and the Go types
// of the IR reached from Graph through its exported fields, by name.
func irTypes(t *testing.T) (map[string]*irgen.Type, map[string]reflect.Type) {
	t.Helper()
	files, err := irgen.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	types, err := irgen.Describe(files)
	if err != nil {
		t.Fatal(err)
	}
	gen := map[string]*irgen.Type{}
	for _, ty := range types {
		gen[ty.Name] = ty
	}
	reached := map[string]reflect.Type{}
	var walk func(rt reflect.Type)
	walk = func(rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map || rt.Kind() == reflect.Array {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || rt.PkgPath() != reflect.TypeFor[graph.Graph]().PkgPath() {
			return
		}
		if _, ok := reached[rt.Name()]; ok {
			return
		}
		reached[rt.Name()] = rt
		for i := range rt.NumField() {
			if f := rt.Field(i); f.IsExported() {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[graph.Graph]())
	return gen, reached
}

// genFuncs returns the functions of ir_gen.go by receiver type and name
// ("fastDecoder.step", "differ.stepFields", "retryParts").
func genFuncs(t *testing.T) map[string]*ast.FuncDecl {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), irgen.Output, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil {
			rt := fd.Recv.List[0].Type
			if st, ok := rt.(*ast.StarExpr); ok {
				rt = st.X
			}
			name = rt.(*ast.Ident).Name + "." + name
		}
		out[name] = fd
	}
	return out
}

// caseKeys returns the string constants of the case clauses of fn.
func caseKeys(fn *ast.FuncDecl) []string {
	var keys []string
	ast.Inspect(fn, func(n ast.Node) bool {
		if cc, ok := n.(*ast.CaseClause); ok {
			for _, e := range cc.List {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					k, _ := strconv.Unquote(lit.Value)
					keys = append(keys, k)
				}
			}
		}
		return true
	})
	return keys
}

// selected returns the fields fn selects of the variables named in vars.
func selected(fn *ast.FuncDecl, vars ...string) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(fn, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && slices.Contains(vars, id.Name) {
				out[se.Sel.Name] = true
			}
		}
		return true
	})
	return out
}

// handed returns the fields of x that fn hands on: passed to a call (as
// x.F, &x.F or x.F[i]) or ranged over.
func handed(fn *ast.FuncDecl) map[string]bool {
	out := map[string]bool{}
	field := func(e ast.Expr) {
		for {
			switch v := e.(type) {
			case *ast.UnaryExpr:
				e = v.X
				continue
			case *ast.IndexExpr:
				e = v.X
				continue
			case *ast.SelectorExpr:
				if id, ok := v.X.(*ast.Ident); ok && id.Name == "x" {
					out[v.Sel.Name] = true
				}
			}
			return
		}
	}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch v := n.(type) {
		case *ast.CallExpr:
			for _, a := range v.Args {
				field(a)
			}
		case *ast.RangeStmt:
			field(v.X)
		}
		return true
	})
	return out
}

// methodName is irgen's name of a type's methods (HTTPAction httpAction).
func methodName(s string) string {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	switch {
	case i == 0:
		return s
	case i == 1 || i == len(s):
		return strings.ToLower(s[:i]) + s[i:]
	}
	return strings.ToLower(s[:i-1]) + s[i-1:]
}

// TestEveryFieldGenerated: every struct type of the IR reached from Graph
// is generated (or one of the few hand-written ones, whose encoding is not
// field by field), its generator's field list is the Go type's exported
// fields, and in ir_gen.go every field has its case in the type's decoder,
// its comparison in the type's diff (unless its tag says it is not
// compared, or the type is compared whole), and every field that holds an
// expression its place in the expression walk. A field added without its
// tags, or a hand-written gap, fails here.
func TestEveryFieldGenerated(t *testing.T) {
	gen, reached := irTypes(t)
	funcs := genFuncs(t)
	exprType := reflect.TypeFor[graph.Expr]()
	// holdsExpr: the Go type holds an *Expr somewhere.
	memo := map[reflect.Type]bool{}
	var holdsExpr func(rt reflect.Type) bool
	holdsExpr = func(rt reflect.Type) bool {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
			rt = rt.Elem()
		}
		if rt == exprType {
			return true
		}
		if rt.Kind() != reflect.Struct {
			return false
		}
		if v, ok := memo[rt]; ok {
			return v
		}
		memo[rt] = false
		for i := range rt.NumField() {
			if f := rt.Field(i); f.IsExported() && holdsExpr(f.Type) {
				memo[rt] = true
			}
		}
		return memo[rt]
	}
	for name, rt := range reached {
		ty := gen[name]
		if ty == nil {
			if !slices.Contains(irgen.HandWritten, name) {
				t.Errorf("%s is a struct of the IR without a //graph:gen directive", name)
			}
			continue
		}
		var goFields, genFields []string
		for i := range rt.NumField() {
			if f := rt.Field(i); f.IsExported() {
				goFields = append(goFields, f.Name+" "+f.Tag.Get("json"))
			}
		}
		for _, f := range ty.Fields {
			genFields = append(genFields, f.Name+" "+f.JSONTag)
		}
		if !slices.Equal(goFields, genFields) {
			t.Errorf("%s: the generator describes %q, the type has %q", name, genFields, goFields)
			continue
		}
		m := methodName(name)
		dec := funcs["fastDecoder."+m]
		if dec == nil {
			t.Errorf("%s: ir_gen.go has no decoder fastDecoder.%s", name, m)
			continue
		}
		keys := caseKeys(dec)
		var cmp *ast.FuncDecl
		switch ty.Diff {
		case "fields":
			cmp = funcs["differ."+m+"Fields"]
		case "parts":
			cmp = funcs[m+"Parts"]
		}
		if ty.Diff != "whole" && cmp == nil {
			t.Errorf("%s: ir_gen.go has no comparison for it (diff=%s)", name, ty.Diff)
			continue
		}
		compared := map[string]bool{}
		if cmp != nil {
			compared = selected(cmp, "o", "n")
		}
		walk := funcs["exprVisitor."+m]
		walked := map[string]bool{}
		if walk != nil {
			walked = handed(walk)
		}
		for i, f := range ty.Fields {
			sf, _ := rt.FieldByName(f.Name)
			if keys[i] != f.JSONKey {
				t.Errorf("%s.%s: the decoder's case %d is %q, not its key %q", name, f.Name, i, keys[i], f.JSONKey)
			}
			hooked := f.Diff == "-" || strings.HasPrefix(f.Diff, "with:") || strings.HasPrefix(f.Diff, "whole:") || (ty.Diff == "parts" && strings.HasPrefix(f.Diff, "fn:"))
			if ty.Diff != "whole" && !hooked && !compared[f.Name] {
				t.Errorf("%s.%s (diff=%s): the comparison does not read it", name, f.Name, f.Diff)
			}
			if f.Diff == "-" && compared[f.Name] {
				t.Errorf("%s.%s: tagged diff=-, but the comparison reads it", name, f.Name)
			}
			if holdsExpr(sf.Type) && !walked[f.Name] {
				t.Errorf("%s.%s holds expressions, but the expression walk does not visit it", name, f.Name)
			}
		}
		if len(keys) != len(ty.Fields) {
			t.Errorf("%s: the decoder has %d cases for %d fields", name, len(keys), len(ty.Fields))
		}
	}
	for name := range gen {
		if reached[name] == nil {
			t.Errorf("%s is generated but not part of the IR", name)
		}
	}
}

// TestEveryFieldInCorpus: every field of every generated type is set
// (not its zero value) in some graph of the stored corpus, so that
// TestDecodeFastMatchesReference, which has the generated decoder take
// each of them and agree with encoding/json, covers every field.
func TestEveryFieldInCorpus(t *testing.T) {
	gen, reached := irTypes(t)
	set := map[string]bool{}
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			walk(v.Elem())
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		case reflect.Struct:
			name := v.Type().Name()
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				if !v.Field(i).IsZero() {
					set[name+"."+f.Name] = true
				}
				walk(v.Field(i))
			}
		}
	}
	for _, g := range storedCorpus(t) {
		walk(reflect.ValueOf(g))
	}
	for name := range gen {
		rt := reached[name]
		if rt == nil {
			continue
		}
		for i := range rt.NumField() {
			if f := rt.Field(i); f.IsExported() && !set[name+"."+f.Name] {
				t.Errorf("no graph of the stored corpus sets %s.%s: add it to irEvery", name, f.Name)
			}
		}
	}
}
