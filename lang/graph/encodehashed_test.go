package graph

import (
	"bytes"
	"fmt"
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
