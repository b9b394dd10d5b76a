// Package testrun runs the tests of flowrun test files (spec/testing.md):
// each test starts its workflow on a scratch SQLite store under a fake
// clock, drives it through interp.Engine (the production engine, with its
// Mock and BeforeCommit hooks) moving the clock to the next thing due, so
// sleeps, backoff, timeouts, deadlines and breaker cooldowns pass at once,
// sends the test's signals, applies its upgrade, and compares the
// finished run with the test's expectations. With Crash it runs the test
// again once per commit point, dropping the engine after that commit and
// rebuilding a new one from the store.
//
// testrun must not parse HCL (lang/testfile did), must not print (the CLI
// words the results), must not read the wall clock (Options.Wall measures
// how long a test took) and writes only to its scratch stores.
package testrun
