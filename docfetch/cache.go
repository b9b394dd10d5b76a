package docfetch

import (
	"sync"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
)

// Cache keeps what a fetcher answered for each URL, the document or the
// error, so that a process that compiles again and again does not fetch
// again each time: for its life (ttl 0: a command, which then sees one
// document per URL in all its loads), or for ttl (the language server,
// which compiles at every edit and picks up a changed document within
// ttl). It holds at most maxCached URLs. Safe for concurrent use.
type Cache struct {
	fetch   lang.DocumentFetcher
	clock   clock.Clock
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]cached
}

// maxCached bounds a Cache.
const maxCached = 32

type cached struct {
	at    time.Time
	limit int64
	body  []byte
	err   error
}

// NewCache returns a cache in front of fetch; clk tells the time of each
// answer when ttl is above 0 (it may be nil otherwise).
func NewCache(fetch lang.DocumentFetcher, clk clock.Clock, ttl time.Duration) *Cache {
	return &Cache{fetch: fetch, clock: clk, ttl: ttl, entries: map[string]cached{}}
}

// Fetch is a lang.DocumentFetcher: the answer kept for url when it is
// fresh and was fetched with the same limit, else a new fetch.
func (c *Cache) Fetch(url string, limit int64) ([]byte, error) {
	var now time.Time
	if c.ttl > 0 {
		now = c.clock.Now()
	}
	c.mu.Lock()
	e, ok := c.entries[url]
	c.mu.Unlock()
	if ok && e.limit == limit && (c.ttl <= 0 || now.Sub(e.at) < c.ttl) {
		return e.body, e.err
	}
	body, err := c.fetch(url, limit)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCached {
		clear(c.entries)
	}
	c.entries[url] = cached{at: now, limit: limit, body: body, err: err}
	return body, err
}
