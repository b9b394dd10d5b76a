// Package api is flowrun's one door as Go: the interface (Service) through
// which the faces (the CLI's verbs, flowtui, the HTTP handlers of flowrun
// serve) read and steer runs, with its two implementations: Local, an
// engine over a store in this process, and Client, an HTTP client of a
// flowrun serve (spec/api.md). Both answer with the same values, the JSON
// forms of package interp (interp.RunView, interp.RunSummaryJSON, ...),
// so a face prints the same text and the same JSON whichever it talks
// to, and a refusal is the same error (interp.RunRefError, the store's
// sentinels) on both sides.
//
// api words a refusal once, for every face (a *Refusal: the message and
// how to go on, as the CLI prints it and the API answers it); it must not
// print or pick exit codes (the faces do), must not hold engine policy
// (what a signal, cancel, retry or decision may do is interp's), must not
// read the wall clock (LocalOptions.Clock), and Client must not guess: an
// answer it cannot read (HTML, a body over its limit, a server that is
// not flowrun's) is an error that names the server, never a value. Client
// never writes its token anywhere but the Authorization header of a
// request to its server.
package api
