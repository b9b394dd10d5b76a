// Package flowrun is the API for Go programs that embed flowrun: open a
// store by its database value (a SQLite path or a postgres:// URL, as
// --db and FLOWRUN_DB take), load workflow files, apply them (store their
// versions, with the same version check as `flowrun apply`), start runs,
// signal them, wait for their end and follow their events.
//
// It is a thin facade over the engine (package interp), the language
// (package lang), the store (package store and store/backend) and, for
// Dial, the API client (package api): it holds
// no workflow logic of its own, so a program that embeds flowrun and the
// flowrun binary treat the same database alike, and either may work on the
// runs the other started. Its names and types are a stable API (see the
// README's "Embedding flowrun in a Go program"); the packages it calls are
// internal to flowrun and change without notice. (Options.Clock takes
// package clock's interface, and VersionError unwraps to the version
// check's own error types, for errors.As.)
//
// A typical program:
//
//	f, err := flowrun.Open(ctx, "app.db", flowrun.Options{Create: true})
//	...
//	defer f.Close()
//	mod, err := f.Load(ctx, "workflows/")
//	...
//	if _, err := f.Apply(ctx, mod); err != nil { ... }
//	run, err := f.Start(ctx, "ship", map[string]any{"order": "A-1"})
//	...
//	run, err = f.Wait(ctx, run.ID)
//
// Wait works on the run in the calling process until it ends; a program
// that runs `flowrun worker` beside it may call Wait as well (the store's
// leases keep one process on a run at a time).
//
// A program that talks to a flowrun serve instead of a database Dials it
// (package api's client, the one the CLI's --server uses):
//
//	s, err := flowrun.Dial("https://flowrun.internal:8443", token)
//	...
//	run, err := s.Start(ctx, "ship", map[string]any{"order": "A-1"})
//	run, err = s.Wait(ctx, run.ID) // the server's workers run it
//
// Package flowrun must not print, read the environment (beyond what the
// engine's defaults read for secrets and exec programs), choose exit codes
// or duplicate what interp, lang or store decide.
package flowrun
