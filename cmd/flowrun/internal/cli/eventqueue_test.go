package cli

import (
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestEventQueueOrder: the queue hands every event to fn once, in the
// order added; flush returns once fn has handled all added before it; an
// event added after close goes to fn at once, after the rest.
func TestEventQueueOrder(t *testing.T) {
	var mu sync.Mutex
	var got []int64
	q := startEventQueue(func(ev store.Event) {
		mu.Lock()
		got = append(got, ev.ID)
		mu.Unlock()
	})
	const n = 3 * maxQueuedEvents
	for i := range int64(n) {
		q.add(store.Event{ID: i})
	}
	q.flush()
	mu.Lock()
	if len(got) != n {
		t.Fatalf("after flush fn had %d events, want %d", len(got), n)
	}
	mu.Unlock()
	q.add(store.Event{ID: n})
	q.close()
	q.add(store.Event{ID: n + 1})
	for i, id := range got {
		if id != int64(i) {
			t.Fatalf("event %d handed as the %dth", id, i)
		}
	}
	if len(got) != n+2 {
		t.Fatalf("fn had %d events, want %d", len(got), n+2)
	}
}

// TestEventQueueDoesNotWait: while fn is busy (a slow terminal), adding
// an event does not wait for it, up to maxQueuedEvents waiting; past
// that, add waits for fn.
func TestEventQueueDoesNotWait(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	q := startEventQueue(func(store.Event) {
		once.Do(func() { close(entered); <-release })
	})
	defer q.close()
	q.add(store.Event{})
	<-entered // fn holds the first event
	added := make(chan struct{})
	go func() {
		for range maxQueuedEvents {
			q.add(store.Event{})
		}
		close(added)
	}()
	select {
	case <-added:
	case <-time.After(10 * time.Second):
		t.Fatal("add waited for a busy fn")
	}
	over := make(chan struct{})
	go func() {
		q.add(store.Event{})
		close(over)
	}()
	select {
	case <-over:
		t.Fatal("add did not wait with the queue full")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-over
	q.flush()
}
