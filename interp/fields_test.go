package interp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxFields is the most fields a struct type of the package may have
// (issue 18: a type past it holds more than one concern; split it by
// concern, as runner is split into runEnv, runState, decisions and
// supervisor).
const maxFields = 20

// TestNoTypeHasTooManyFields scans the package's source, tests included,
// and fails on a struct type with more than maxFields fields (an embedded
// type counts one).
func TestNoTypeHasTooManyFields(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			seen++
			count := 0
			for _, fl := range st.Fields.List {
				count += max(len(fl.Names), 1)
			}
			if count > maxFields {
				t.Errorf("%s: type %s has %d fields, more than %d: split it by concern", fset.Position(ts.Pos()), ts.Name.Name, count, maxFields)
			}
			return true
		})
	}
	if seen < 50 {
		t.Fatalf("found %d struct types; the scan lost them", seen)
	}
}
