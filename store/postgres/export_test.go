package postgres

// Waiters returns how many callers are inside s.WaitForWork; tests use it to
// know that waiters are in place before they send a notification.
func Waiters(s *Store) int { return s.listener.waiters() }

// ScheduleDueSQL is the due query, for its plan test.
const ScheduleDueSQL = scheduleDueSQL
