package cli

import (
	"sync"

	"github.com/flowrun/flowrun/store"
)

// eventQueue hands the engine's events to fn on a goroutine of its own, in
// the order the engine reported them. The engine reports a commit's events
// from inside that commit, before the runs it committed move on: a
// progress or log line written there would hold up every run of the batch
// for the time of a write to the terminal. The queue's goroutine belongs
// to the command that started it (startEventQueue), which flushes it
// before printing anything else and stops it before it returns.
type eventQueue struct {
	fn func(store.Event)

	mu   sync.Mutex
	cond sync.Cond // the queue changed: an event came, fn took or finished some, stop
	q    []store.Event
	busy bool // fn is handling events taken from q
	stop bool
	done chan struct{}
}

// maxQueuedEvents is how many events wait at most: past it, the engine's
// commit waits for fn, as it did when it called fn itself.
const maxQueuedEvents = 4096

// startEventQueue starts the goroutine that hands events to fn.
func startEventQueue(fn func(store.Event)) *eventQueue {
	q := &eventQueue{fn: fn, done: make(chan struct{})}
	q.cond.L = &q.mu
	go q.run()
	return q
}

// add queues ev. Once the queue is closed, it hands ev to fn itself.
func (q *eventQueue) add(ev store.Event) {
	q.mu.Lock()
	for len(q.q) >= maxQueuedEvents && !q.stop {
		q.cond.Wait()
	}
	if q.stop {
		q.mu.Unlock()
		<-q.done // after what was queued
		q.fn(ev)
		return
	}
	q.q = append(q.q, ev)
	q.cond.Broadcast()
	q.mu.Unlock()
}

// run hands the queued events to fn, a batch at a time, until close.
func (q *eventQueue) run() {
	defer close(q.done)
	var batch []store.Event
	q.mu.Lock()
	for {
		for len(q.q) == 0 && !q.stop {
			q.cond.Wait()
		}
		if len(q.q) == 0 {
			q.mu.Unlock()
			return
		}
		batch, q.q = q.q, batch[:0]
		q.busy = true
		q.cond.Broadcast() // room for add
		q.mu.Unlock()
		for i, ev := range batch {
			q.fn(ev)
			batch[i] = store.Event{}
		}
		q.mu.Lock()
		q.busy = false
		q.cond.Broadcast() // for flush
	}
}

// flush waits until fn has handled every event added so far.
func (q *eventQueue) flush() {
	q.mu.Lock()
	for len(q.q) > 0 || q.busy {
		q.cond.Wait()
	}
	q.mu.Unlock()
}

// close hands fn what is queued, ends the goroutine and waits for it;
// events added afterwards go to fn at once.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.stop = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.done
}

// eventSink returns what the command's engine reports its events to: the
// command's queue, started here (once) with fn and closed with the
// command.
func (e *env) eventSink(fn func(store.Event)) func(store.Event) {
	if e.cmdEngine.events == nil {
		q := startEventQueue(fn)
		e.cmdEngine.events = q
		e.closers = append(e.closers, func() error { q.close(); return nil })
	}
	return e.cmdEngine.events.add
}

// flushEvents waits until every event the engine reported so far is
// printed or logged: before the command prints anything else.
func (e *env) flushEvents() {
	if q := e.cmdEngine.events; q != nil {
		q.flush()
	}
}
