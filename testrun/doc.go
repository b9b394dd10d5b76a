// Package testrun runs the tests of flowrun test files (spec/testing.md):
// each test starts its workflow on a scratch SQLite store under a fake
// clock, drives it through interp.Engine (the production engine, with its
// Mock and BeforeCommit hooks) moving the clock to the next thing due, so
// sleeps, backoff, timeouts, deadlines and breaker cooldowns pass at once,
// sends the test's signals, applies its upgrade, and compares the
// finished run with the test's expectations. Mocked exec and http calls
// take their results in the order the engine started the attempts
// (order.go), so a parallel foreach gets the same results every run.
// With Crash it runs the test again once per commit point, dropping the
// engine after that commit and resuming with a new one: from a checkpoint
// of the uninterrupted run (a snapshot of its scratch store, crash.go),
// stopping once the replay reaches a state the uninterrupted run passed
// through (driver.go's key, the store's part of it sqlite.Store.Digest);
// a test whose actions ran for real replays from the start instead.
//
// testrun must not parse HCL (lang/testfile did), must not print (the CLI
// words the results), must not read the wall clock (Options.Wall measures
// how long a test took and times a real program's attempt, as the
// engine's ActionClock), must not run SQL of its own (what it needs of a
// scratch store beyond store.Store, store/sqlite provides) and writes only
// to its scratch directory (stores and checkpoints).
package testrun
