package interp

import "slices"

// What a long run keeps in memory: the scheduler drops the finished steps
// that no later decision reads (keep), so memory follows what is live.

// forget drops a finished step key that no later decision reads (an until
// iteration older than the latest one) from the runner's maps, so memory
// does not grow with the run's history. Its rows stay in the store.
func (sc *scheduler) forget(key string) {
	if row := sc.rows[key]; row == nil || !row.Status.Terminal() {
		return
	}
	sc.unsetRow(key)
	delete(sc.states, key)
	delete(sc.lastAtt, key)
	delete(sc.failures, key)
	delete(sc.noted, key)
}

// keep tracks which finished steps later decisions still read, so that
// the runner holds the rows and results of the steps still open or still
// read, not of the whole run: a long run's memory follows what is live.
// A finished step is read by the steps that need it (their gate and their
// expressions: a compiled graph lists every step an expression reads among
// the reader's Needs) and by the workflow outputs. Once every step that
// needs it has settled and no output reads it, its row, result and state
// are dropped from the runner's maps, with the rows of its foreach items
// and until iterations; only its terminal status is kept. Its rows stay in
// the store, and a rebuild drops them again the same way.
type keep struct {
	readers []int32 // per step (graph order): unsettled readers; +1 when an output reads it
	gone    []bool  // per step: dropped from the maps (it ended)
	queue   []int32 // steps settled since the last compact
}

// unread reports whether nothing reads step name's result any more: no
// step that has not settled needs it and no workflow output reads it
// (the keep's count; false while there is no keep).
func (sc *scheduler) unread(name string) bool {
	if sc.keep == nil {
		return false
	}
	i, ok := sc.l.g.StepIndex(name)
	return ok && sc.keep.readers[i] <= 0
}

// readAtAll reports whether any step or workflow output of the graph
// reads step name's result, settled or not (unread is the count of those
// still to come). It does not change while the runner lives: a runner
// loads one graph.
func (sc *scheduler) readAtAll(name string) bool {
	for _, s := range sc.l.g.Steps {
		if slices.Contains(s.Needs, name) {
			return true
		}
	}
	return slices.Contains(sc.l.prog.OutputReads(), name)
}

// over reports whether step name ended and was dropped from the maps.
func (sc *scheduler) over(name string) bool {
	if sc.keep == nil {
		return false
	}
	i, ok := sc.l.g.StepIndex(name)
	return ok && sc.keep.gone[i]
}

// newKeep counts the readers of every step of the graph.
func (sc *scheduler) newKeep() *keep {
	n := len(sc.l.g.Steps)
	k := &keep{readers: make([]int32, n), gone: make([]bool, n)}
	read := func(name string) {
		if i, ok := sc.l.g.StepIndex(name); ok {
			k.readers[i]++
		}
	}
	for _, s := range sc.l.g.Steps {
		for _, need := range s.Needs {
			read(need)
		}
	}
	for _, name := range sc.l.prog.OutputReads() {
		read(name)
	}
	if len(sc.l.compensations().steps) > 0 {
		// A compensation may read any step that completed, until the run
		// ends: nothing is released.
		for _, s := range sc.l.g.Steps {
			read(s.Name)
		}
	}
	// Every step already settled (a rebuild settles what the store holds)
	// releases its needs at the first compact.
	for name := range sc.results {
		if i, ok := sc.l.g.StepIndex(name); ok {
			k.queue = append(k.queue, int32(i))
		}
	}
	return k
}

// compact drops the finished steps that no later decision reads (see keep).
func (sc *scheduler) compact() {
	if sc.keep == nil {
		sc.keep = sc.newKeep()
	}
	k := sc.keep
	q := k.queue
	k.queue = nil
	steps := sc.l.g.Steps
	for _, i := range q {
		for _, need := range steps[i].Needs {
			if j, ok := sc.l.g.StepIndex(need); ok {
				k.readers[j]--
				sc.release(j)
			}
		}
		sc.release(int(i))
	}
}

// release drops step i (in graph order) when it ended, was settled, and
// nothing reads it any more.
func (sc *scheduler) release(i int) {
	k := sc.keep
	if k.gone[i] || k.readers[i] > 0 {
		return
	}
	s := sc.l.g.Steps[i]
	row := sc.rows[s.Name]
	if row == nil || !row.Status.Terminal() {
		return
	}
	if _, ok := sc.results[s.Name]; !ok {
		return
	}
	if s.Foreach != nil || s.Until != nil {
		// Its items' and iterations' rows were read only while it ran.
		for key, sub := range sc.rows {
			if sub.Step == s.Name && key != s.Name && sub.Status.Terminal() {
				sc.drop(key)
			}
		}
	}
	sc.drop(s.Name)
	delete(sc.results, s.Name)
	if sc.conv != nil {
		sc.conv.ForgetStep(s.Name)
	}
	k.gone[i] = true
}

// drop removes a step key from the runner's maps (its rows stay in the
// store).
func (sc *scheduler) drop(key string) {
	sc.unsetRow(key)
	delete(sc.states, key)
	delete(sc.lastAtt, key)
	delete(sc.failures, key)
	delete(sc.noted, key)
}
