package graph

// index is what the consumers of a graph look up by step, built once per
// graph on the first call of a method below and shared from then on: a
// graph is not changed after Seal or Decode, so the index stays true.
type index struct {
	pos      map[string]int      // step name → position in Steps
	needs    [][]int32           // per step, the positions of its needs
	switchOf map[string][]string // step → the switch steps that can choose it
	expands  bool                // some step has foreach items or until
}

func (g *Graph) index() *index {
	if ix := g.idx.Load(); ix != nil {
		return ix
	}
	ix := &index{pos: make(map[string]int, len(g.Steps)), needs: make([][]int32, len(g.Steps)), switchOf: map[string][]string{}}
	for i, s := range g.Steps {
		ix.pos[s.Name] = i
	}
	for i, s := range g.Steps {
		for _, n := range s.Needs {
			if j, ok := ix.pos[n]; ok {
				ix.needs[i] = append(ix.needs[i], int32(j))
			}
		}
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

// StepIndex returns the position of the step named name in g.Steps.
func (g *Graph) StepIndex(name string) (int, bool) {
	i, ok := g.index().pos[name]
	return i, ok
}

// NeedPositions returns the positions in g.Steps of the needs of the step
// at position i (a need that names no step of g is left out). The slice is
// shared: the caller must not change it.
func (g *Graph) NeedPositions(i int) []int32 { return g.index().needs[i] }

// SwitchesTargeting returns the switch steps that can choose the step
// named name (in a case or the default), in graph order. The slice is
// shared: the caller must not change it.
func (g *Graph) SwitchesTargeting(name string) []string { return g.index().switchOf[name] }

// Expands reports whether some step has foreach items or until iterations,
// so that a run may hold more step keys than the graph has steps.
func (g *Graph) Expands() bool { return g.index().expands }
