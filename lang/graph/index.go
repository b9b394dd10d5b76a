package graph

import (
	"slices"
	"strings"
)

// index is what the consumers of a graph look up by step, built once per
// graph on the first call of a method below and shared from then on: a
// graph is not changed after Seal or Decode, so the index stays true.
//
// A worker keeps the index of every graph it runs for as long as the
// graph is cached, so it is kept flat: a few int32 a step, not a map entry
// and a slice header (and a small allocation) a step, which for a long
// chain was a tenth of the decoded graph's size.
type index struct {
	byName   []int32             // the positions in Steps, sorted by step name
	needOff  []int32             // step i's needs are needAt[needOff[i]:needOff[i+1]]
	needAt   []int32             // the positions of the needs, step after step
	switchOf map[string][]string // step → the switch steps that can choose it
	expands  bool                // some step has foreach items or until
}

func (g *Graph) index() *index {
	if ix := g.idx.Load(); ix != nil {
		return ix
	}
	n := len(g.Steps)
	ix := &index{byName: make([]int32, n), needOff: make([]int32, n+1), switchOf: map[string][]string{}}
	for i := range ix.byName {
		ix.byName[i] = int32(i)
	}
	slices.SortStableFunc(ix.byName, func(a, b int32) int { return strings.Compare(g.Steps[a].Name, g.Steps[b].Name) })
	total := 0
	for _, s := range g.Steps {
		total += len(s.Needs)
	}
	ix.needAt = make([]int32, 0, total)
	for i, s := range g.Steps {
		for _, n := range s.Needs {
			if j, ok := ix.find(g, n); ok {
				ix.needAt = append(ix.needAt, int32(j))
			}
		}
		ix.needOff[i+1] = int32(len(ix.needAt))
		ix.expands = ix.expands || s.Foreach != nil || s.Until != nil
		if s.Action.Kind != KindSwitch || s.Action.Switch == nil {
			continue
		}
		seen := map[string]bool{}
		add := func(t string) {
			if !seen[t] {
				seen[t] = true
				ix.switchOf[t] = append(ix.switchOf[t], s.Name)
			}
		}
		for _, c := range s.Action.Switch.Cases {
			for _, t := range c.Next {
				add(t)
			}
		}
		for _, t := range s.Action.Switch.Default {
			add(t)
		}
	}
	g.idx.CompareAndSwap(nil, ix)
	return g.idx.Load()
}

// find returns the position of the step named name by binary search of
// byName. With two steps of one name (a graph Seal rejects) it finds the
// last, as a map filled in order would.
func (ix *index) find(g *Graph, name string) (int, bool) {
	k, ok := slices.BinarySearchFunc(ix.byName, name, func(p int32, name string) int { return strings.Compare(g.Steps[p].Name, name) })
	if !ok {
		return 0, false
	}
	for k+1 < len(ix.byName) && g.Steps[ix.byName[k+1]].Name == name {
		k++
	}
	return int(ix.byName[k]), true
}

// StepIndex returns the position of the step named name in g.Steps.
func (g *Graph) StepIndex(name string) (int, bool) {
	return g.index().find(g, name)
}

// NeedPositions returns the positions in g.Steps of the needs of the step
// at position i (a need that names no step of g is left out). The slice is
// shared: the caller must not change it.
func (g *Graph) NeedPositions(i int) []int32 {
	ix := g.index()
	lo, hi := ix.needOff[i], ix.needOff[i+1]
	return ix.needAt[lo:hi:hi]
}

// SwitchesTargeting returns the switch steps that can choose the step
// named name (in a case or the default), in graph order. The slice is
// shared: the caller must not change it.
func (g *Graph) SwitchesTargeting(name string) []string { return g.index().switchOf[name] }

// Expands reports whether some step has foreach items or until iterations,
// so that a run may hold more step keys than the graph has steps.
func (g *Graph) Expands() bool { return g.index().expands }
