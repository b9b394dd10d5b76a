package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// TestFastCanonicalOrderAgreesWithTopoOrder: on random step lists (random
// DAGs in random and in canonical order, with unsorted or repeated needs,
// unknown needs, repeated names, cycles and nil steps), fastCanonicalOrder
// says true only of steps that encTopoOrder leaves as they are, and says
// it of every such list whose needs are sorted and distinct: normalising
// skips encTopoOrder exactly when it would change nothing.
func TestFastCanonicalOrderAgreesWithTopoOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	canonicalSeen := 0
	for iter := range 3000 {
		n := 1 + r.IntN(12)
		steps := make([]*graph.Step, n)
		for i := range steps {
			steps[i] = &graph.Step{Name: fmt.Sprintf("s%d", r.IntN(40))}
			for j := range i {
				if r.IntN(3) == 0 {
					steps[i].Needs = append(steps[i].Needs, steps[j].Name)
				}
			}
			slices.Sort(steps[i].Needs)
			steps[i].Needs = slices.Compact(steps[i].Needs)
		}
		switch iter % 8 {
		case 0:
			r.Shuffle(n, func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
		case 1:
			if s := steps[r.IntN(n)]; len(s.Needs) > 1 {
				slices.Reverse(s.Needs)
			}
		case 2:
			steps[r.IntN(n)].Needs = append(steps[r.IntN(n)].Needs, "unknown")
		case 3:
			steps[0].Needs = append(steps[0].Needs, steps[n-1].Name) // maybe a cycle
		case 4:
			if n > 1 {
				steps[r.IntN(n)] = nil
			}
		}
		if iter%8 >= 5 {
			if order, ok := graph.EncTopoOrder(steps); ok {
				steps = order // the canonical order
			}
		}
		fast := graph.FastCanonicalOrder(steps)
		order, ok := graph.EncTopoOrder(steps)
		same := ok && slices.Equal(order, steps)
		sortedNeeds := true
		for _, s := range steps {
			if s != nil && !slices.IsSorted(s.Needs) || s != nil && len(slices.Compact(slices.Clone(s.Needs))) != len(s.Needs) {
				sortedNeeds = false
			}
		}
		if fast && !same {
			t.Fatalf("iteration %d: fastCanonicalOrder says canonical, encTopoOrder (ok %v) reorders %v", iter, ok, names(steps))
		}
		if same && sortedNeeds && !fast {
			t.Fatalf("iteration %d: encTopoOrder keeps %v, fastCanonicalOrder says not canonical", iter, names(steps))
		}
		if fast {
			canonicalSeen++
		}
	}
	if canonicalSeen < 500 {
		t.Fatalf("only %d canonical lists generated", canonicalSeen)
	}
}

func names(steps []*graph.Step) []string {
	var out []string
	for _, s := range steps {
		if s == nil {
			out = append(out, "<nil>")
			continue
		}
		out = append(out, fmt.Sprintf("%s%v", s.Name, s.Needs))
	}
	return out
}
