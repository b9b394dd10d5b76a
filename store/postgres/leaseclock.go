package postgres

import "fmt"

// Leases are measured on the database's clock. Many hosts share a
// Postgres store and their clocks disagree: a lease written from one
// host's clock and compared with another's lets a host whose clock runs
// ahead by more than the lease take live runs (and run their actions
// twice), and one whose clock lags renew a lease into the past. So every
// lease expiry is written as the database's time plus the lease, and
// every comparison of an expiry is with the database's time; the callers'
// Now (the engine's injected clock) still drives everything else: when a
// run is due (available_at), timers, deadlines and schedules.
//
// Options.CallerClock keeps the callers' Now for leases too, as SQLite
// does (one host, one clock): the store conformance suite runs on a fixed
// epoch and needs it. A deployment never sets it.

// dbNowMicros is the database's clock in unix microseconds: the start of
// the current statement, so one statement compares with one instant.
const dbNowMicros = `(extract(epoch FROM statement_timestamp()) * 1000000)::bigint`

// leaseNow is the SQL for the instant a lease is measured from: the
// caller's now (parameter $now) when parameter $caller is true, else the
// database's clock.
func leaseNow(caller, now int) string {
	return fmt.Sprintf(`(CASE WHEN $%d::boolean THEN $%d::bigint ELSE %s END)`, caller, now, dbNowMicros)
}

// leaseNow56 and leaseNow21 are leaseNow(5, 6) and leaseNow(2, 1) as
// constants, for the statements that are constants (a statement built with
// leaseNow at package level would be work at every flowrun process's
// start).
const (
	leaseNow56 = `(CASE WHEN $5::boolean THEN $6::bigint ELSE ` + dbNowMicros + ` END)`
	leaseNow21 = `(CASE WHEN $2::boolean THEN $1::bigint ELSE ` + dbNowMicros + ` END)`
)
