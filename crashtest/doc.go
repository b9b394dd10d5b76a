// Package crashtest owns the kill -9 proofs of flowrun's durability
// promise (spec/semantics.md §12): tests that build the real flowrun binary,
// run it as separate processes on a SQLite file, SIGKILL them at random
// instants and check, from the command's JSON and the database itself, that
// nothing was lost, nothing ran twice without a kill to explain it and no
// two processes ever worked on one run at once. It also owns the proof
// that a disk filling up under the database is a store fault that loses
// nothing (TestDiskFull, on a small tmpfs; root only).
//
// The package holds tests only. It must not be imported, must not use mocks
// or the engine's Go API (it drives flowrun as a user would, through its
// command line), and must not write to a database that a flowrun process it
// started is using: it reads the SQLite file read-only to check attempts.
//
// The CI-size proofs run with go test; scripts/proof runs them at full
// size. Both take their sizes and seeds from the environment (see the
// test files).
package crashtest
