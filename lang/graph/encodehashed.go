package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// EncodeHashed returns Encode(g) and Hash(g) from one encoding: storing a
// graph needs both, and Hash is the SHA-256 of the encoding. Like Hash, it
// refuses a graph that is not sealed.
func EncodeHashed(g *Graph) ([]byte, string, error) {
	if g == nil {
		return nil, "", errors.New("hash graph: the graph is nil")
	}
	if err := checkSealed(g); err != nil {
		return nil, "", err
	}
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
