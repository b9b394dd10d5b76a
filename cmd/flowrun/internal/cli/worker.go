package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
	"github.com/flowrun/flowrun/telemetry/tracing"
)

func workerCommand() *command {
	return &command{
		name:  "worker",
		args:  "[--concurrency N] [--grace DURATION] [--host NAME] [--lease DURATION] [--metrics ADDR] [--log-format text|json] [--log-level LEVEL]",
		short: "run a long-lived worker that claims and runs due runs",
		long: `Worker claims runs that are due (enqueued with apply --detach, woken by a
timer or a signal, or left by a process that died) and runs them, up to
--concurrency at once. Several workers may share one database.

SIGTERM or Ctrl-C drains the worker: it claims nothing more and lets the
actions in flight finish for up to --grace, then stops them and releases their
runs, which any worker resumes later. A second signal stops it at once; that
is safe too. It exits 0 after draining, 1 when stopped at once, 5 on a store
error.

The worker's runs are leased to it as HOST/PID/w...: --host (default
$FLOWRUN_HOST, else the machine's host name) names it, so workers in
containers that share a host name can be told apart. A run whose owner is on
this host and whose process is gone is taken over at once; any other run is
taken over when its lease expires: --lease after the last heartbeat (default
30s; heartbeats come every third of it).

A step's program gets little of the worker's environment: PATH, HOME, USER,
LANG, LC_*, TZ, TMPDIR and the variables its workflow names in pass_env;
never FLOWRUN_DB or another FLOWRUN_* variable of the worker.
--exec-user NAME (flowrun as root) runs the programs as that user, away
from the worker's files and secrets (spec/security.md §9).

The worker logs to stderr through log/slog: --log-format text (key=value,
the default) or json (one object a line), --log-level debug, info, warn or
error. A line about a run carries run_id, and step and attempt when it is
about one. --metrics HOST:PORT serves Prometheus metrics at /metrics
(spec/observability.md lists them). OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) turns on OpenTelemetry traces over
OTLP/HTTP: one trace per run, a span per attempt; the other OTEL_* variables
(OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, headers, timeouts) apply.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			concurrency := fs.Int("concurrency", 16, "how many runs to work on at once")
			grace := fs.Duration("grace", 30*time.Second, "how long a drain lets actions in flight finish")
			host := fs.String("host", "", "the host name in this worker's leases (default $FLOWRUN_HOST, else the machine's)")
			lease := fs.Duration("lease", 30*time.Second, "how long a run stays leased to this worker after its last heartbeat")
			metricsAddr := fs.String("metrics", "", "serve Prometheus metrics at http://ADDR/metrics (HOST:PORT; default: none)")
			retention := addRetentionFlags(fs)
			logs := addLogFlags(fs)
			execUser := e.execUserFlag(fs)
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("worker takes no arguments, got %q", args[0]).hint("Run: flowrun worker [--concurrency N]")
				}
				if err := execUser(); err != nil {
					return err
				}
				if *concurrency < 1 {
					return usageErrorf("--concurrency must be at least 1, got %d", *concurrency).hint("Pass --concurrency 1 or more.")
				}
				if *grace < 0 {
					return usageErrorf("--grace must not be negative, got %s", *grace).hint("Pass a duration such as --grace 30s.")
				}
				if *lease < time.Second {
					return usageErrorf("--lease must be at least 1s, got %s", *lease).hint("Pass a duration such as --lease 30s.")
				}
				retain, err := retention.options()
				if err != nil {
					return err
				}
				h := firstNonEmpty(*host, e.getenv("FLOWRUN_HOST"))
				if strings.Contains(h, "/") {
					return usageErrorf("the host name %q must not contain a slash", h).hint("Pass --host (or set FLOWRUN_HOST) to a name without slashes.")
				}
				log, err := logs.logger(e.stderr, e.clock)
				if err != nil {
					return err
				}
				o := workOptions{concurrency: *concurrency, grace: *grace, host: h, lease: *lease, log: log, retain: retain}
				if *metricsAddr != "" {
					if err := checkListenAddr("--metrics", *metricsAddr); err != nil {
						return err
					}
				}
				if o.tracer, err = e.openTracing(ctx); err != nil {
					return err
				}
				if *metricsAddr != "" {
					if o.metrics, err = listenMetrics("--metrics", *metricsAddr); err != nil {
						closeTracing(o.tracer, log) // work, which closes it, is not reached
						return err
					}
				}
				return e.work(ctx, o)
			}
		},
	}
}

// workOptions are a worker's settings: host ("" for the machine's host
// name) and lease set its owner identity and lease length; metrics, when
// set, is the listener of --metrics.
type workOptions struct {
	concurrency int
	grace       time.Duration
	host        string
	lease       time.Duration
	log         *slog.Logger
	metrics     *metricsServer
	tracer      *tracing.Tracer // nil: no traces
	retain      interp.RetainOptions
}

// work runs a worker until a signal drains it.
func (e *env) work(ctx context.Context, o workOptions) error {
	concurrency, log := o.concurrency, o.log
	if o.metrics != nil {
		defer o.metrics.close()
	}
	defer closeTracing(o.tracer, log)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	if note := e.newStoreNote(); note != "" {
		log.Info(note, "db", store.ShownDSN(e.dsn))
	}
	st, err := e.openStore(ctx, true)
	if err != nil {
		return err
	}
	var observers []telemetry.Observer
	if o.metrics != nil {
		m := e.newMetrics(st)
		observers = append(observers, m)
		o.metrics.serve(m)
		log.Info("serving metrics", "addr", o.metrics.addr, "path", "/metrics")
	}
	if o.tracer != nil {
		observers = append(observers, o.tracer)
		log.Info("exporting traces over OTLP/HTTP", "endpoint", firstNonEmpty(e.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), e.getenv("OTEL_EXPORTER_OTLP_ENDPOINT")))
	}
	eng := e.workerEngine(st, o.host, o.lease, log, telemetry.Multi(observers...), o.tracer)
	w := interp.NewWorker(eng, interp.WorkerOptions{Concurrency: concurrency, Version: binaryVersion()})
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	if err := w.Start(runCtx); err != nil {
		return fmt.Errorf("starting the worker: %w", err)
	}
	log.Info(fmt.Sprintf("working on %s with up to %d runs at once; stop with Ctrl-C or SIGTERM", store.ShownDSN(e.dsn), concurrency),
		"db", store.ShownDSN(e.dsn), "concurrency", concurrency)
	log.Debug(describeRetention(o.retain))
	stopRetention := startRetention(ctx, eng, o.retain)
	defer stopRetention()

	select {
	case <-sigs:
	case <-w.Done():
		return workerDied(ctx, w)
	}
	if err := e.drainWorker(ctx, w, o.grace, sigs, cancelRun, log); err != nil {
		return err
	}
	e.flushEvents()
	log.Info("drained and stopped")
	return nil
}

// workerEngine returns the engine of a long-lived worker: it logs each
// event of its runs to log (logEvent), reports to obs (metrics, traces),
// passes each attempt its span (TRACEPARENT, traceparent) when tracer is
// not nil, sampled as tracer decides,
// and its leases carry host (or the machine's name) and last lease.
func (e *env) workerEngine(st store.Store, host string, lease time.Duration, log *slog.Logger, obs telemetry.Observer, tracer *tracing.Tracer) *interp.Engine {
	opts := interp.Options{
		Clock:       e.clock,
		Getenv:      e.getenv,
		OnEvent:     e.display.gate(e.eventSink(func(ev store.Event) { logEvent(log, ev) })),
		Owner:       store.Owner{Host: host},
		LeaseFor:    lease,
		Observer:    telemetry.Multi(obs, healthLog{log: log}),
		Traceparent: tracer != nil,
		ExecUser:    e.execUser,
	}
	if tracer != nil {
		opts.TraceSampled = tracer.Sampled
	}
	return interp.New(st, opts)
}

// workerDied is the error of a worker whose claim loop ended on its own:
// a newer flowrun migrated the database (the worker released its runs),
// or the store kept failing. Its runs could not be released through a store
// that fails: they stay leased to it until another worker takes them over
// (at once on the same host, whose process it sees gone; elsewhere when
// the leases expire).
func workerDied(ctx context.Context, w *interp.Worker) error {
	err := w.Err()
	if err == nil {
		err = w.Stop(ctx)
	}
	if err == nil {
		err = errors.New("the worker's claim loop ended unexpectedly")
	}
	if errors.Is(err, store.ErrSchemaTooNew) {
		return &exitError{code: ExitStore, msg: "the worker stopped because a newer flowrun migrated the database; it released the runs it held for a worker of that version", err: err, hintText: openHint(err)}
	}
	return &exitError{code: ExitStore, msg: "the worker stopped because the store kept failing for a whole lease; another worker takes over the runs it held once the store answers (one on this host at once, one elsewhere when their leases expire)", err: err}
}

// drainWorker drains a started worker after a first signal: it claims
// nothing more and the actions in flight finish for up to grace, then are
// stopped (their runs resume later); a second signal on sigs stops it at
// once (cancelRun ends its runs' context) and is exit 1.
func (e *env) drainWorker(ctx context.Context, w *interp.Worker, grace time.Duration, sigs <-chan os.Signal, cancelRun context.CancelFunc, log *slog.Logger) error {
	log.Info(fmt.Sprintf("draining: claiming no more runs and letting actions in flight finish for up to %s; signal again to stop at once", grace))
	stopCtx, cancelStop := context.WithCancel(ctx)
	defer cancelStop()
	done := make(chan error, 1)
	go func() { done <- w.Stop(stopCtx) }()
	timer := e.clock.NewTimer(grace)
	defer timer.Stop()
	forced := false
	var err error
	select {
	case err = <-done:
	case <-timer.C():
		log.Warn("the grace period is over; stopping the actions still in flight (their runs resume later)")
		cancelStop()
		err = <-done
	case <-sigs:
		forced = true
		cancelStop()
		cancelRun()
		err = <-done
	}
	if err != nil {
		return storeError("the worker stopped on a store error", err)
	}
	if forced {
		log.Warn("stopped at once; interrupted runs resume under the next worker")
		return exitCode(ExitFailed)
	}
	return nil
}
