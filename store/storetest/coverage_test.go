package storetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// contract is every interface of package store that a backend implements:
// Store (with the interfaces it embeds) and the optional capabilities the
// engine asserts.
var contract = []reflect.Type{
	reflect.TypeFor[store.Store](),
	reflect.TypeFor[store.TransitionClaimer](),
	reflect.TypeFor[store.CancelPoller](),
	reflect.TypeFor[store.WorkWaiter](),
}

// TestEveryMethodIsExercised fails when a method of the store contract is
// called nowhere in the suite's own code (its non-test files, which are
// what every backend runs): a method the engine may call but the backends
// are never checked to agree on.
func TestEveryMethodIsExercised(t *testing.T) {
	called := map[string]bool{}
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
					called[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	if files < 10 {
		t.Fatalf("read only %d files of the suite", files)
	}
	var missing []string
	methods := 0
	for _, it := range contract {
		for i := range it.NumMethod() {
			m := it.Method(i).Name
			methods++
			if m == "Close" { // every store the suite makes is closed by its newStore
				continue
			}
			if !called[m] {
				missing = append(missing, it.Name()+"."+m)
			}
		}
	}
	if methods < 40 {
		t.Fatalf("the contract has only %d methods; the interface list is wrong", methods)
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s is called by no case of storetest: add a case that calls it and checks what both backends return", m)
	}
}
