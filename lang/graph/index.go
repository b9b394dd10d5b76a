package graph

import (
	"hash/maphash"
	"slices"
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
	// slots is an open-addressed hash table (linear probing) of one plus
	// the positions in Steps, by the hash of the step's name under seed
	// (0: empty). A binary search of the names sorted took 14 string
	// comparisons a lookup, each a load of another step: a rebuild looks
	// up every step key of a long run several times.
	slots    []int32
	seed     maphash.Seed
	needOff  []int32             // step i's needs are needAt[needOff[i]:needOff[i+1]]
	needAt   []int32             // the positions of the needs, step after step
	switchOf map[string][]string // step → the switch steps that can choose it
	catchOf  map[string][]string // step → the steps whose catch can choose it
	expands  bool                // some step has foreach items or until
}

func (g *Graph) index() *index {
	if ix := g.idx.Load(); ix != nil {
		return ix
	}
	n := len(g.Steps)
	size := 8
	for size*3 < n*4 { // at most three quarters full
		size *= 2
	}
	ix := &index{slots: make([]int32, size), seed: maphash.MakeSeed(), needOff: make([]int32, n+1), switchOf: map[string][]string{}, catchOf: map[string][]string{}}
	for i, s := range g.Steps {
		ix.insert(g, s.Name, i)
	}
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
		for _, c := range s.Catch {
			for _, t := range c.Next {
				if !slices.Contains(ix.catchOf[t], s.Name) {
					ix.catchOf[t] = append(ix.catchOf[t], s.Name)
				}
			}
		}
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

// insert puts position i, the step named name, in the table. With two
// steps of one name (a graph Seal rejects) the later one replaces the
// earlier, as a map filled in order would.
func (ix *index) insert(g *Graph, name string, i int) {
	mask := uint64(len(ix.slots) - 1)
	for j := maphash.String(ix.seed, name) & mask; ; j = (j + 1) & mask {
		if p := ix.slots[j]; p == 0 || g.Steps[p-1].Name == name {
			ix.slots[j] = int32(i) + 1
			return
		}
	}
}

// find returns the position of the step named name.
func (ix *index) find(g *Graph, name string) (int, bool) {
	mask := uint64(len(ix.slots) - 1)
	for j := maphash.String(ix.seed, name) & mask; ; j = (j + 1) & mask {
		p := ix.slots[j]
		if p == 0 {
			return 0, false
		}
		if g.Steps[p-1].Name == name {
			return int(p - 1), true
		}
	}
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

// CatchesTargeting returns the steps whose catch blocks name the step in
// a next, in graph order.
func (g *Graph) CatchesTargeting(name string) []string { return g.index().catchOf[name] }

// Expands reports whether some step has foreach items or until iterations,
// so that a run may hold more step keys than the graph has steps.
func (g *Graph) Expands() bool { return g.index().expands }
