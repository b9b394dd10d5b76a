package feed

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
)

// graphCache keeps decoded graphs: a stored version never changes, so each
// is read and decoded once. It is used from the poll goroutines, so it
// locks.
type graphCache struct {
	mu      sync.Mutex
	byHash  map[string]*lang.Graph // workflow + "\x00" + hash
	byVer   map[string]*lang.Graph // workflow + "\x00" + version
	missing map[string]bool        // versions known not to be stored
}

func (c *graphCache) get(key string, m map[string]*lang.Graph) (*lang.Graph, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := m[key]
	return g, ok
}

func (c *graphCache) put(v store.Version, g *lang.Graph) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byHash == nil {
		c.byHash, c.byVer = map[string]*lang.Graph{}, map[string]*lang.Graph{}
	}
	c.byHash[v.Workflow+"\x00"+v.Hash] = g
	c.byVer[v.Workflow+"\x00"+v.Version] = g
}

// GraphByHash returns the decoded graph a run is bound to.
func (s *Source) GraphByHash(ctx context.Context, workflow, hash string) (*lang.Graph, error) {
	if g, ok := s.graphs.get(workflow+"\x00"+hash, s.graphs.byHash); ok {
		return g, nil
	}
	v, err := s.Store.VersionGetByHash(ctx, workflow, hash)
	if err != nil {
		return nil, fmt.Errorf("reading the graph of workflow %s: %w", workflow, err)
	}
	return s.decode(v)
}

// GraphByVersion returns the decoded graph of a stored version.
func (s *Source) GraphByVersion(ctx context.Context, workflow, version string) (*lang.Graph, error) {
	if g, ok := s.graphs.get(workflow+"\x00"+version, s.graphs.byVer); ok {
		return g, nil
	}
	v, err := s.Store.VersionGet(ctx, workflow, version)
	if err != nil {
		return nil, fmt.Errorf("reading workflow %s version %s: %w", workflow, version, err)
	}
	return s.decode(v)
}

// Newest returns the newest stored version of a workflow and its graph.
func (s *Source) Newest(ctx context.Context, workflow string) (store.Version, *lang.Graph, error) {
	vs, err := s.Store.VersionList(ctx, workflow)
	if err != nil {
		return store.Version{}, nil, fmt.Errorf("listing the versions of workflow %s: %w", workflow, err)
	}
	if len(vs) == 0 {
		return store.Version{}, nil, fmt.Errorf("workflow %s has no stored version: %w", workflow, store.ErrNotFound)
	}
	v := vs[len(vs)-1]
	g, err := s.decode(v)
	return v, g, err
}

func (s *Source) decode(v store.Version) (*lang.Graph, error) {
	g, err := lang.Decode(v.Graph)
	if err != nil {
		return nil, fmt.Errorf("workflow %s version %s: %w", v.Workflow, v.Version, err)
	}
	s.graphs.put(v, g)
	return g, nil
}

// stepCount is the number of steps of a run's graph, or 0 when the version
// cannot be read (the count then falls back to the step rows).
func (s *Source) stepCount(ctx context.Context, workflow, version string) int {
	key := workflow + "\x00" + version
	s.graphs.mu.Lock()
	miss := s.graphs.missing[key]
	s.graphs.mu.Unlock()
	if miss {
		return 0
	}
	g, err := s.GraphByVersion(ctx, workflow, version)
	if errors.Is(err, store.ErrNotFound) {
		s.graphs.mu.Lock()
		if s.graphs.missing == nil {
			s.graphs.missing = map[string]bool{}
		}
		s.graphs.missing[key] = true
		s.graphs.mu.Unlock()
		return 0
	}
	if err != nil {
		return 0
	}
	return len(g.Steps)
}
