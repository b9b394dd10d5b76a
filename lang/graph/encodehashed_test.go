package graph

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEncodeHashed: one encoding gives Encode's bytes and Hash's hash, and
// on a graph whose steps are checked by several goroutines (more steps
// than ParallelStepDecode per processor) a step changed after Seal is
// reported, the first one in graph order when there are several.
func TestEncodeHashed(t *testing.T) {
	old := ParallelStepDecode
	ParallelStepDecode = 2
	t.Cleanup(func() { ParallelStepDecode = old })
	g := &Graph{Workflow: "w", Version: "1.0.0"}
	for i := range 40 {
		g.Steps = append(g.Steps, irStep(fmt.Sprintf("s%02d", i), irExec("echo", fmt.Sprint(i))))
	}
	Seal(g)
	b, h, err := EncodeHashed(g)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Encode(g)
	wantHash, _ := Hash(g)
	if !bytes.Equal(b, want) || h != wantHash {
		t.Fatalf("EncodeHashed differs from Encode and Hash: hash %s, want %s", h, wantHash)
	}
	for _, changed := range [][]int{{33}, {21, 30}, {30, 21, 7}} {
		c := &Graph{Workflow: "w", Version: "1.0.0"}
		for _, s := range g.Steps {
			cp := *s
			c.Steps = append(c.Steps, &cp)
		}
		first := len(c.Steps)
		for _, i := range changed {
			c.Steps[i].Action = irExec("echo", "changed")
			first = min(first, i)
		}
		_, _, err := EncodeHashed(c)
		if wantMsg := fmt.Sprintf(`step "s%02d" is not sealed`, first); err == nil || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("steps %v changed after Seal: err = %v, want %q", changed, err, wantMsg)
		}
	}
}

// TestEncodeHashedTrustsSeal: storing a graph Seal just sealed (EncodeHashed)
// does not hash its steps again, and gives the bytes and hash that the
// checking Hash gives; a graph whose steps were replaced or reordered since
// Seal, or that Seal never saw, has every step hashed and checked.
func TestEncodeHashedTrustsSeal(t *testing.T) {
	g := &Graph{Workflow: "w", Version: "1.0.0"}
	for i := range 30 {
		g.Steps = append(g.Steps, irStep(fmt.Sprintf("s%02d", i), irExec("echo", fmt.Sprint(i))))
	}
	Seal(g)
	before := stepHashes.Load()
	b, h, err := EncodeHashed(g)
	if err != nil {
		t.Fatal(err)
	}
	if n := stepHashes.Load() - before; n != 0 {
		t.Fatalf("EncodeHashed of a sealed graph hashed %d steps again", n)
	}
	want, _ := Encode(g)
	wantHash, err := Hash(g)
	if err != nil || !bytes.Equal(b, want) || h != wantHash {
		t.Fatalf("EncodeHashed of a sealed graph: hash %s, want %s (%v)", h, wantHash, err)
	}

	// A step replaced by a changed copy after Seal: checked, and refused.
	cp := *g.Steps[7]
	cp.Action = irExec("echo", "changed")
	g.Steps[7] = &cp
	before = stepHashes.Load()
	if _, _, err := EncodeHashed(g); err == nil || !strings.Contains(err.Error(), `step "s07" is not sealed`) {
		t.Fatalf("a step replaced after Seal: err = %v", err)
	}
	if n := stepHashes.Load() - before; n == 0 {
		t.Fatal("a step replaced after Seal was not hashed")
	}
	Seal(g)
	// The same steps in a graph Seal never saw: every step hashed.
	c := &Graph{Workflow: g.Workflow, Version: g.Version, Steps: slices.Clone(g.Steps)}
	before = stepHashes.Load()
	if _, _, err := EncodeHashed(c); err != nil {
		t.Fatal(err)
	}
	if n := stepHashes.Load() - before; n != int64(len(c.Steps)) {
		t.Fatalf("EncodeHashed of a graph Seal never saw hashed %d steps, want %d", n, len(c.Steps))
	}
	// A step dropped: checked.
	g.Steps = g.Steps[:len(g.Steps)-1]
	before = stepHashes.Load()
	if _, _, err := EncodeHashed(g); err != nil {
		t.Fatal(err)
	}
	if n := stepHashes.Load() - before; n != int64(len(g.Steps)) {
		t.Fatalf("EncodeHashed after a step was dropped hashed %d steps, want %d", n, len(g.Steps))
	}
}

// TestNormalizeEncodeHashed: it gives what NormalizeGraph then EncodeHashed
// give, on a sealed graph without hashing a step again, and on a graph
// whose normal form changed since Seal with every step hash checked.
func TestNormalizeEncodeHashed(t *testing.T) {
	build := func() *Graph {
		g := irShip(t)
		Seal(g)
		return g
	}
	want := build()
	NormalizeGraph(want)
	wantB, wantH, err := EncodeHashed(want)
	if err != nil {
		t.Fatal(err)
	}
	g := build()
	before := stepHashes.Load()
	b, h, err := NormalizeEncodeHashed(g)
	if err != nil || !bytes.Equal(b, wantB) || h != wantH {
		t.Fatalf("NormalizeEncodeHashed of a sealed graph: hash %s, want %s (%v)", h, wantH, err)
	}
	if n := stepHashes.Load() - before; n != 0 {
		t.Fatalf("NormalizeEncodeHashed of a sealed graph hashed %d steps", n)
	}
	// The steps put out of order after Seal: normalizing puts them back,
	// every hash is checked, and the result is the same.
	g = build()
	slices.Reverse(g.Steps)
	before = stepHashes.Load()
	b, h, err = NormalizeEncodeHashed(g)
	if err != nil || !bytes.Equal(b, wantB) || h != wantH {
		t.Fatalf("NormalizeEncodeHashed of a graph reordered after Seal: hash %s, want %s (%v)", h, wantH, err)
	}
	if n := stepHashes.Load() - before; n != int64(len(g.Steps)) {
		t.Fatalf("NormalizeEncodeHashed of a graph reordered after Seal hashed %d steps, want %d", n, len(g.Steps))
	}
	// A step replaced by a changed copy after Seal is refused, as by
	// EncodeHashed.
	g = build()
	for i, s := range g.Steps {
		if s.Name == "charge" {
			cp := *s
			http := *s.Action.HTTP
			http.Method = "PUT"
			cp.Action.HTTP = &http
			g.Steps[i] = &cp
		}
	}
	if _, _, err := NormalizeEncodeHashed(g); err == nil || !strings.Contains(err.Error(), `step "charge" is not sealed`) {
		t.Fatalf("a step changed after Seal: err = %v", err)
	}
}
