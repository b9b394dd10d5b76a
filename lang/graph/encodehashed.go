package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// EncodeHashed returns Encode(g) and Hash(g) from one encoding: storing a
// graph needs both, and Hash is the SHA-256 of the encoding. Like Hash, it
// refuses a graph that is not sealed.
func EncodeHashed(g *Graph) ([]byte, string, error) {
	if g == nil {
		return nil, "", errors.New("hash graph: the graph is nil")
	}
	for i, s := range g.Steps {
		if s == nil {
			return nil, "", fmt.Errorf("hash graph %q: step %d is nil", g.Workflow, i)
		}
		h, err := StepHash(s)
		if err != nil {
			return nil, "", fmt.Errorf("hash graph %q: %w", g.Workflow, err)
		}
		if s.Hash != h {
			return nil, "", fmt.Errorf("hash graph %q: step %q is not sealed (its hash is %q, its definition hashes to %q); call lang.Seal after the last change to the graph", g.Workflow, s.Name, s.Hash, h)
		}
	}
	b, err := Encode(g)
	if err != nil {
		return nil, "", fmt.Errorf("hash graph: %w", err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}
