// Package layering holds no code. Its tests state the module's structural
// rules and fail when a change breaks one:
//
//   - data flows one way: store imports neither lang nor interp, lang
//     imports neither interp nor store, in their code and their tests;
//   - lang and its packages import neither net nor net/http: the compiler
//     opens no network connection, and a document an openapi action names
//     by URL comes through the fetcher its caller gives (docfetch);
//   - interp imports no command, no TUI, no concrete store driver (it
//     sees the store through the interfaces of package store) and not
//     the HCL front end, package lang (it runs stored graphs);
//   - the TUI imports no concrete store driver outside tests and test-only
//     packages, and no command does: the binaries open the store through
//     store/backend's one Open(dsn) and hand it over;
//   - the small packages keep to their place (TestImportRules' table says
//     why of each): schedule, termtext, telemetry, lang/naming and
//     lang/graph/internal/irgen import none of the packages they serve;
//     server imports no driver, no command and not package lang; the
//     embedding facade (package flowrun) imports no front end, server or
//     exporter, and no package of the module imports it; only
//     telemetry/metrics and telemetry/tracing (and the CLI) import the
//     Prometheus and OpenTelemetry libraries; nothing imports layering;
//   - a stored graph is decoded only by the engine (graph.Decode is called
//     by no code outside lang/graph and interp), so every front end reads
//     graphs through the engine's one cache;
//   - nothing but package clock reads the wall clock or waits on it:
//     time.Now, time.Since, time.Until, time.Sleep, and the timers, which
//     read it implicitly (time.After, time.Tick, time.NewTimer,
//     time.NewTicker, time.AfterFunc), outside test files and test-only
//     packages, so timers, backoff and deadlines run on an injected clock.
//     The files build constraints leave out on this system are scanned
//     too. context.WithTimeout and I/O deadlines are not in the rule: they
//     bound waits on the operating system (a connect, an exporter's
//     flush), not the time of a run;
//   - the package docs that speak of goroutines keep their word: lang/expr,
//     lsp, tui/display and tui/theme start none, and lang and lang/graph
//     start them only with a WaitGroup they wait on in the same function;
//   - the CLI calls no store method but the reads it prints and its two
//     writes that change no run (RunPrune, TokenCreate, TokenRevoke), as
//     its package doc says; the rest goes through the engine;
//   - the TUI reads the engine's own types: no struct of tui repeats more
//     than three fields (name and type) of a struct of interp or store;
//   - no struct type, in code or tests, has more than 20 fields unless the
//     test's bigStructs says why it is one idea (and bigStructs names no
//     type that is back under the limit).
//
// A test-only package is one that tests import and no package's code does
// (store/storetest, tui/internal/fixture). It must not be imported by
// anything.
package layering
