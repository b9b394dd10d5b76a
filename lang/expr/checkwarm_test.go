package expr

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// warmScopes numbers the scopes warmScope makes.
var warmScopes atomic.Int64

// warmScope is a scope of its own (its key is no other scope's, in this
// run or an earlier one of the same process), so that its environment is
// built fresh, and the name of its one input.
func warmScope() (*Scope, string) {
	name := "warm" + strconv.FormatInt(warmScopes.Add(1), 10)
	return &Scope{Inputs: graph.ObjectOf(map[string]*graph.Type{name: graph.TypeInt})}, name
}

// TestCatalogOnlyForComprehensions: checking expressions without a
// comprehension does not build the checker's suggestion catalog (it
// renders the whole environment as a config, the largest part of checking
// a short workflow's first expression); the first comprehension checked in
// an environment builds it, once.
func TestCatalogOnlyForComprehensions(t *testing.T) {
	s, name := warmScope()
	before := warmRuns.Load()
	for _, src := range []string{"input.NAME + 1", "string(input.NAME) + \"x\"", "input.NAME > 2 ? 1 : 2"} {
		src = strings.ReplaceAll(src, "NAME", name)
		p, diags := ParseExpr(src, hcl.Range{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if _, diags := CheckExpr(p, s, nil); diags.HasErrors() {
			t.Fatalf("%s: %v", src, diags)
		}
	}
	if n := warmRuns.Load() - before; n != 0 {
		t.Fatalf("checking three expressions without a comprehension built the catalog %d times, want 0", n)
	}
	for _, src := range []string{"[1, 2].all(x, x > input.NAME)", "[1, 2].map(x, x + input.NAME)"} {
		src = strings.ReplaceAll(src, "NAME", name)
		p, diags := ParseExpr(src, hcl.Range{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if _, diags := CheckExpr(p, s, nil); diags.HasErrors() {
			t.Fatalf("%s: %v", src, diags)
		}
	}
	if n := warmRuns.Load() - before; n != 1 {
		t.Fatalf("checking two comprehensions built the catalog %d times, want 1", n)
	}
}

// TestCatalogRace: mistakes (which make cel-go build the catalog) and
// comprehensions (whose check reads it) checked at once in one environment
// do not race (run with -race).
func TestCatalogRace(t *testing.T) {
	for range 20 {
		s, name := warmScope()
		se, err := envFor(s)
		if err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 8 {
			src := "nosuch_name + input." + name
			if i%2 == 1 {
				src = "[1, 2].exists(x, x == input." + name + ")"
			}
			p, diags := ParseExpr(src, hcl.Range{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if p, diags = p.withAST(); diags.HasErrors() {
				t.Fatal(diags)
			}
			wg.Go(func() {
				<-start
				if _, iss := se.check(p.ast); (iss.Err() != nil) != (i%2 == 0) {
					t.Errorf("%s: issues %v", src, iss.Err())
				}
			})
		}
		close(start)
		wg.Wait()
	}
}
