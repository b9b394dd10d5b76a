package interp

import (
	"container/list"
	"sync"
)

// graphCache holds the decoded graphs of this process by workflow and
// hash, the most recently used first, up to a bound on their total steps:
// a worker that runs many workflows over days keeps the graphs it uses,
// not every graph it ever loaded. A graph dropped from the cache stays
// alive for as long as a runner holds it, and is decoded again when it is
// next loaded. The graph used last is always kept, however long.
type graphCache struct {
	mu       sync.Mutex
	maxSteps int
	steps    int
	byKey    map[string]*list.Element
	lru      list.List // of *cachedGraph, most recent first
}

type cachedGraph struct {
	key string
	l   *loaded
}

// graphCacheSteps bounds the total steps of the cached graphs: a 10,000-step
// chain of set steps decodes to about 5 MB.
const graphCacheSteps = 50_000

func newGraphCache(maxSteps int) *graphCache {
	return &graphCache{maxSteps: maxSteps, byKey: map[string]*list.Element{}}
}

// get returns the cached graph of key, or nil, and marks it used.
func (c *graphCache) get(key string) *loaded {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byKey[key]
	if el == nil {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cachedGraph).l
}

// put caches l under key unless another goroutine cached that key first,
// and returns the graph to use. It drops the least recently used graphs
// while the total steps are over the bound.
func (c *graphCache) put(key string, l *loaded) *loaded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[key]; el != nil {
		c.lru.MoveToFront(el)
		return el.Value.(*cachedGraph).l
	}
	c.byKey[key] = c.lru.PushFront(&cachedGraph{key: key, l: l})
	c.steps += len(l.g.Steps)
	for c.steps > c.maxSteps && c.lru.Len() > 1 {
		old := c.lru.Back().Value.(*cachedGraph)
		c.lru.Remove(c.lru.Back())
		delete(c.byKey, old.key)
		c.steps -= len(old.l.g.Steps)
	}
	return l
}
