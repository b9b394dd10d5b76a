package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/flowrun/flowrun/telemetry/tracing"
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
