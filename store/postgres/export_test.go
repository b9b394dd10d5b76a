package postgres

import "github.com/flowrun/flowrun/store"

// Waiters returns how many callers are inside s.WaitForWork; tests use it to
// know that waiters are in place before they send a notification.
func Waiters(s *Store) int { return s.listener.waiters() }

// ScheduleDueSQL is the due query, for its plan test.
const ScheduleDueSQL = scheduleDueSQL

// RunListSQL is the run listing query of p and its arguments, for its plan
// test; beforeCreated is the creation time of p.BeforeID.
func RunListSQL(p store.RunListParams, beforeCreated int64) (string, []any) {
	return runListSQL(p, beforeCreated)
}
