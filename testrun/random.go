package testrun

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// A crash replay starts from a checkpoint of the uninterrupted execution
// (crash.go): the scratch store copied as it was when the engine was about
// to make its next commit (sqlite.Store.Snapshot, put back by Restore),
// with what the test's side of the execution held at that instant (the
// mocks' calls, the driver loop, the virtual clock, the random source).
// What of the store counts when two executions are compared is the
// store's to say (sqlite.Store.Digest); this file keeps the random source,
// whose position the comparison includes.

// pcgSource is the engine's random source (ids, retry jitter), locked so
// that its state can be read while the engine draws from it. A replay's
// engine continues the stream where the dropped engine left it: it draws
// other ids than the dropped one did, and the same ones the uninterrupted
// execution drew from that instant on.
type pcgSource struct {
	mu sync.Mutex
	p  *rand.PCG
}

func newPCG(seed1, seed2 uint64) *pcgSource { return &pcgSource{p: rand.NewPCG(seed1, seed2)} }

func (s *pcgSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Uint64()
}

// state is the source's position in its stream.
func (s *pcgSource) state() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.p.MarshalBinary()
	if err != nil {
		panic(fmt.Sprintf("marshal a PCG: %v", err)) // a PCG always marshals
	}
	return b
}

func restorePCG(state []byte) (*pcgSource, error) {
	p := &rand.PCG{}
	if err := p.UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("restore the random source: %w", err)
	}
	return &pcgSource{p: p}, nil
}
