package postgres

import "github.com/flowrun/flowrun/store"

// Waiters returns how many callers are inside s.WaitForWork; tests use it to
// know that waiters are in place before they send a notification.
func Waiters(s *Store) int { return s.listener.waiters() }

// ListenDials returns how many times s's listener opened, or tried to open,
// its connection; no WaitForWork may be in progress.
func ListenDials(s *Store) int {
	s.listener.mu.Lock()
	s.listener.init()
	s.listener.mu.Unlock()
	s.listener.sem <- struct{}{}
	defer func() { <-s.listener.sem }()
	return s.listener.dials
}

// ScheduleDueSQL is the due query, for its plan test.
const ScheduleDueSQL = scheduleDueSQL

// RunListSQL is the run listing query of p and its arguments, for its plan
// test; beforeCreated is the creation time of p.BeforeID.
func RunListSQL(p store.RunListParams, beforeCreated int64) (string, []any) {
	return runListSQL(p, beforeCreated)
}
