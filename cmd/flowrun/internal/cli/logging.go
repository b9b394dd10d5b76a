package cli

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// The long-running verbs (worker, and serve) log through log/slog, as
// text (logfmt) or JSON lines: --log-format and --log-level. A line about
// a run carries run_id, and step and attempt when it is about one; its
// time is the engine clock's. What is logged is what the store holds
// (events are redacted before they are stored) and the database's
// address without its password (store.ShownDSN): secrets never appear.

// logFlags are --log-format and --log-level.
type logFlags struct {
	format *string
	level  *string
}

// addLogFlags declares --log-format and --log-level on fs.
func addLogFlags(fs *flag.FlagSet) logFlags {
	return logFlags{
		format: fs.String("log-format", "text", "how log lines are written: text (key=value) or json (one object a line)"),
		level:  fs.String("log-level", "info", "the least severe level logged: debug, info, warn or error"),
	}
}

// logger checks the flags and returns the logger writing to w, or a
// usage error naming the flag.
func (f logFlags) logger(w io.Writer, clk clock.Clock) (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(*f.level) {
	case "debug":
		lvl = slog.LevelDebug
	case "info":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, usageErrorf("--log-level must be debug, info, warn or error, got %q", *f.level).hint("Pass --log-level info, for example.")
	}
	o := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch *f.format {
	case "text":
		h = slog.NewTextHandler(w, o)
	case "json":
		h = slog.NewJSONHandler(w, o)
	default:
		return nil, usageErrorf("--log-format must be text or json, got %q", *f.format).hint("Pass --log-format text or --log-format json.")
	}
	return slog.New(clockHandler{Handler: h, clk: clk}), nil
}

// clockHandler stamps each record with the engine clock's time, not the
// wall clock's that slog reads.
type clockHandler struct {
	slog.Handler
	clk clock.Clock
}

func (h clockHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Time = h.clk.Now()
	return h.Handler.Handle(ctx, r)
}

func (h clockHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return clockHandler{Handler: h.Handler.WithAttrs(as), clk: h.clk}
}

func (h clockHandler) WithGroup(name string) slog.Handler {
	return clockHandler{Handler: h.Handler.WithGroup(name), clk: h.clk}
}

// logEvent logs a run's event: its words as the message, with run_id,
// event (the kind), step and attempt when the event has them. Failures
// and interruptions are warnings; a claim is debug.
func logEvent(l *slog.Logger, ev store.Event) {
	lvl := slog.LevelInfo
	switch ev.Kind {
	case "step_failed", "run_failed", "interrupted", "dead_lettered", "alert_failed":
		lvl = slog.LevelWarn
	case "claimed", "run_parked":
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if !l.Enabled(ctx, lvl) {
		return
	}
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs, slog.String("run_id", ev.RunID), slog.String("event", ev.Kind))
	if ev.StepKey != "" {
		attrs = append(attrs, slog.String("step", ev.StepKey))
	}
	d := decodeEventData(ev) // once, for the attempt and the words
	if n := d.attempt(); n > 0 {
		attrs = append(attrs, slog.Int("attempt", n))
	}
	l.LogAttrs(ctx, lvl, eventWordsOf(ev, &d), attrs...)
}
