package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"weak"
)

// EncodeHashed returns Encode(g) and Hash(g) from one encoding: storing a
// graph needs both, and Hash is the SHA-256 of the encoding. Like Hash, it
// refuses a graph that is not sealed, but it trusts the step hashes of a
// graph that Seal sealed and whose Steps still hold the same steps in the
// same order, each with a hash: storing a graph just compiled does not
// hash its steps a second time. A caller that changes a step of a sealed
// graph in place must Seal it again (as it must before Hash); a graph
// built or decoded without Seal, or whose steps were replaced, added or
// removed since, has every step hash recomputed and checked, as Hash does.
func EncodeHashed(g *Graph) ([]byte, string, error) {
	if g == nil {
		return nil, "", errors.New("hash graph: the graph is nil")
	}
	if !sealedAsIs(g) {
		if err := checkSealed(g); err != nil {
			return nil, "", err
		}
	}
	return encodeHashed(g)
}

// sealed holds, for each graph Seal sealed, the steps it hashed, in order
// (a weak.Pointer[Graph] → []*Step). It is kept out of Graph, which tests
// compare with reflect.DeepEqual against decoded graphs; an entry goes when
// its graph is collected.
var sealed sync.Map

// stepHashes counts StepHash calls, for the tests that check that storing
// a sealed graph does not hash its steps again.
var stepHashes atomic.Int64

// markSealed records that Seal just hashed g's steps.
func markSealed(g *Graph) {
	wp := weak.Make(g)
	if _, loaded := sealed.Swap(wp, slices.Clone(g.Steps)); !loaded {
		runtime.AddCleanup(g, func(wp weak.Pointer[Graph]) { sealed.Delete(wp) }, wp)
	}
}

// sealedAsIs reports whether g.Steps holds the steps Seal last hashed, in
// the same order, each with its hash.
func sealedAsIs(g *Graph) bool {
	v, ok := sealed.Load(weak.Make(g))
	if !ok {
		return false
	}
	steps := v.([]*Step)
	if len(steps) != len(g.Steps) {
		return false
	}
	for i, s := range steps {
		if s == nil || g.Steps[i] != s || s.Hash == "" {
			return false
		}
	}
	return true
}

// NormalizeEncodeHashed is NormalizeGraph(g) followed by EncodeHashed(g),
// with the graph walked for its normal form once, not twice: storing a
// graph puts it in normal form in place and encodes it. When normalizing
// changed g, its step hashes are all checked, even if Seal sealed it.
func NormalizeEncodeHashed(g *Graph) ([]byte, string, error) {
	if g == nil {
		return nil, "", errors.New("hash graph: the graph is nil")
	}
	if normal := encNormalize(g, true); !normal || !sealedAsIs(g) {
		if err := checkSealed(g); err != nil {
			return nil, "", err
		}
	}
	b, err := encGraph(g) // g is in normal form: Encode would not copy it
	if err != nil {
		return nil, "", fmt.Errorf("hash graph: encode graph %q: %w", g.Workflow, err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// encodeHashed is EncodeHashed once the step hashes are known good.
func encodeHashed(g *Graph) ([]byte, string, error) {
	b, err := Encode(g)
	if err != nil {
		return nil, "", fmt.Errorf("hash graph: %w", err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// checkSealed recomputes every step's hash and reports the first step (in
// graph order) that is nil or whose Hash is not its StepHash. Like Seal, it
// spreads a large graph's steps over the processors: each goroutine checks
// every workers-th step and ends before checkSealed returns.
func checkSealed(g *Graph) error {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(g.Steps)/ParallelStepDecode))
	first := make([]int, workers) // per worker, the index of its first bad step
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(g.Steps); i += workers {
				if err := checkStepSealed(g, i); err != nil {
					first[w], errs[w] = i, err
					return
				}
			}
		})
	}
	wg.Wait()
	var err error
	at := len(g.Steps)
	for w, e := range errs {
		if e != nil && first[w] < at {
			err, at = e, first[w]
		}
	}
	return err
}

func checkStepSealed(g *Graph, i int) error {
	s := g.Steps[i]
	if s == nil {
		return fmt.Errorf("hash graph %q: step %d is nil", g.Workflow, i)
	}
	h, err := StepHash(s)
	if err != nil {
		return fmt.Errorf("hash graph %q: %w", g.Workflow, err)
	}
	if s.Hash != h {
		return fmt.Errorf("hash graph %q: step %q is not sealed (its hash is %q, its definition hashes to %q); call lang.Seal after the last change to the graph", g.Workflow, s.Name, s.Hash, h)
	}
	return nil
}
