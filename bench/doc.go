// Package bench owns flowrun's performance scenarios: the workloads of
// `flowrun bench` (sequential set and exec steps, many runs on one worker,
// a wide foreach, resuming a long run, listing and showing runs on a large
// store, the memory of long histories, apply's wall time, apply of chains
// of http and exec steps against their physical floors), each measured
// next to a raw-SQLite baseline taken in the same process, so that every
// figure is reported as a ratio to something measured on the same machine
// at the same moment.
//
// A scenario runs on a scratch SQLite database in a directory of its own.
// Run runs one scenario in this process; Suite runs each scenario in a child
// process (re-executing the flowrun binary with `bench --child`) so that the
// peak RSS of each is its own, read from the child's rusage.
//
// Everything is driven through the public APIs of lang, interp and the
// store, exactly as `flowrun apply` and `flowrun worker` do, with one
// exception: the large store of the list scenario (100,000 runs, 1,000,000
// attempts) is seeded by bulk INSERTs straight into the SQLite schema in
// one transaction, because making it through the engine would take longer
// than the whole benchmark. Only the seeding bypasses the engine; what is
// measured on it goes through the store and the engine.
//
// The pg-latency scenario is the exception to the scratch SQLite files: it
// measures workers on Postgres, behind a TCP proxy of its own that adds a
// round trip (latency.go), in a schema it creates in the database given
// with --pg and drops at the end; without --pg the suite skips it.
//
// bench must not change the engine or the store, and must never touch a
// database other than its scratch files and the schemas it creates.
package bench
