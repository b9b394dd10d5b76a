package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/flowrun/flowrun/telemetry/tracing"
	"github.com/flowrun/flowrun/termtext"
)

// openTracing returns the OpenTelemetry tracer the OTEL_* environment
// configures, or nil when it asks for none (no OTLP endpoint). A setting
// flowrun cannot use is a usage error naming the variable, before the
// store is opened.
func (e *env) openTracing(ctx context.Context) (*tracing.Tracer, error) {
	tr, err := tracing.New(ctx, e.getenv)
	if err != nil {
		return nil, usageErrorf("%v", err).hint("Fix the OTEL_* variable, or unset OTEL_EXPORTER_OTLP_ENDPOINT to run without traces.")
	}
	return tr, nil
}

// commandTraces is the tracer of a command's own engine (apply, resume,
// retry, signal, ...), opened on first use.
type commandTraces struct {
	opened bool
	tr     *tracing.Tracer
}

// commandTracer returns the tracer of the command's engine, or nil when
// the environment asks for none: a run that apply works on in the
// foreground is traced as a worker's are, so a run that apply began and a
// worker finished is one trace. A setting flowrun cannot use turns traces
// off with a warning (worker and serve refuse it instead). The spans still
// queued are exported when the command ends.
func (e *env) commandTracer() *tracing.Tracer {
	if e.traces.opened {
		return e.traces.tr
	}
	e.traces.opened = true
	tr, err := tracing.New(context.Background(), e.getenv)
	if err != nil {
		fmt.Fprintf(e.stderr, "flowrun %s: traces are off: %s\n", e.verb, termtext.Line(err.Error()))
		return nil
	}
	if tr != nil {
		e.traces.tr = tr
		e.closers = append(e.closers, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
			defer cancel()
			if err := tr.Close(ctx); err != nil {
				return fmt.Errorf("exporting the last spans: %w", err)
			}
			return nil
		})
	}
	return tr
}

// traceFlushTimeout bounds the export of the spans still queued when a
// process stops.
const traceFlushTimeout = 5 * time.Second

// closeTracing exports the spans still queued, for up to
// traceFlushTimeout, and logs a failure.
func closeTracing(tr *tracing.Tracer, log *slog.Logger) {
	if tr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := tr.Close(ctx); err != nil {
		log.Warn("exporting the last spans failed", "error", err.Error())
	}
}
