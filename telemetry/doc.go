// Package telemetry is what the engine tells about its work, for metrics
// and traces: the Observer interface the engine calls (runs started and
// ended, attempts ended, claims, reclaims, commits, schedule fires), the
// plain values it passes, and the ids of a run's trace (trace.go).
//
// The implementations live below it: telemetry/metrics (Prometheus,
// through client_golang) and telemetry/tracing (OpenTelemetry). The
// engine (package interp) imports this package only, never them, so it
// knows no metrics or tracing library; the CLI wires them in.
//
// telemetry must not import the engine, the store or the language (it
// knows runs as the plain values here), must not read the wall clock (the
// engine passes every instant, read from its injected clock), and an
// Observer must not block or fail the engine: its methods are called on
// the engine's hot paths and return nothing.
package telemetry
