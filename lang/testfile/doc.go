// Package testfile reads flowrun test files (*.test.hcl, spec/testing.md):
// it parses their test blocks (Parse) and checks them against the compiled
// workflows they test (Check): mocked steps exist and their results fit
// the steps' output types, signals have a wait step that takes them,
// expected outputs and steps are declared, assertions compile as CEL over
// the finished run, and upgrade files compile. Every problem is an
// hcl.Diagnostic with the file, line and column.
//
// testfile must not run anything: it imports neither interp nor store, and
// reads no file but the upgrade files a test names, and only those in the
// directory tree of the test file (confineUpgrade).
package testfile
