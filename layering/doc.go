// Package layering holds no code. Its tests state the module's structural
// rules and fail when a change breaks one:
//
//   - data flows one way: store imports neither lang nor interp, lang
//     imports neither interp nor store;
//   - interp imports no command, no TUI and no concrete store driver (it
//     sees the store through the interfaces of package store);
//   - the TUI imports no concrete store driver outside tests and test-only
//     packages (the binaries open the store and hand it over);
//   - nothing but package clock reads the wall clock or sleeps on it
//     (time.Now, time.Since, time.Until, time.Sleep, time.After, time.Tick,
//     time.NewTimer, time.NewTicker, time.AfterFunc) outside test files,
//     so timers, backoff and deadlines run on an injected clock.
//
// It must not be imported by anything.
package layering
