// Package metrics exposes what the engine reports (a telemetry.Observer)
// and what the store holds (read at each scrape) as Prometheus metrics,
// through prometheus/client_golang, on a registry of its own.
//
// metrics must not import the engine, the store or the language: the
// store's figures come through Options.Read, a function the CLI builds
// over the store. It must not read the wall clock (ages are measured
// against Options.Now) and an observation must not block: counters and
// histograms are client_golang's, updated in memory.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/flowrun/flowrun/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Snapshot is what a scrape reads from the store.
type Snapshot struct {
	// Due counts the runs a claim could take now; OldestDue is the
	// earliest available_at among them (zero when none).
	Due       int
	OldestDue time.Time
	// Breakers maps each breaker's name to its state: closed, open or
	// half-open.
	Breakers map[string]string
	// OpenDeadLetters counts the dead letters not yet retried or dropped.
	OpenDeadLetters int
	// LiveWorkers counts the workers of the store's registry that beat
	// within their lease.
	LiveWorkers int
}

// Options configure the metrics.
type Options struct {
	// Now is the engine's clock (required): the age of the oldest due
	// run is measured against it.
	Now func() time.Time
	// Read reads the store's figures at each scrape (nil: none are
	// exposed). It is given the scrape's context, bounded by ReadTimeout.
	Read func(ctx context.Context) (Snapshot, error)
	// ReadTimeout bounds Read (default 5s).
	ReadTimeout time.Duration
}

// Metrics is a telemetry.Observer that counts what the engine reports,
// and an http.Handler that serves the registry in the Prometheus text
// format.
type Metrics struct {
	reg  *prometheus.Registry
	opts Options

	runsStarted     *prometheus.CounterVec
	runsFinished    *prometheus.CounterVec
	attempts        *prometheus.CounterVec
	attemptDuration *prometheus.HistogramVec
	claims          prometheus.Counter
	reclaims        *prometheus.CounterVec
	leaseLosses     *prometheus.CounterVec
	pruned          *prometheus.CounterVec
	storeFailing    prometheus.Gauge
	commits         *prometheus.HistogramVec
	fireLag         *prometheus.HistogramVec
	readErrors      prometheus.Counter
}

var _ telemetry.Observer = (*Metrics)(nil)

// New returns the metrics, registered with the Go runtime's and the
// process's collectors.
func New(o Options) *Metrics {
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 5 * time.Second
	}
	m := &Metrics{reg: prometheus.NewRegistry(), opts: o}
	m.runsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowrun_runs_started_total",
		Help: "Runs this process claimed for the first time, by workflow.",
	}, []string{"workflow"})
	m.runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowrun_runs_finished_total",
		Help: "Runs whose end this process committed, by workflow and status (completed, failed, canceled).",
	}, []string{"workflow", "status"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowrun_step_attempts_total",
		Help: "Ended attempts of exec and http steps, by workflow, step, action kind and outcome (completed, failed, canceled, interrupted).",
	}, []string{"workflow", "step", "kind", "outcome"})
	m.attemptDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flowrun_step_attempt_duration_seconds",
		Help:    "How long ended attempts of exec and http steps took, from their start to their end, by workflow, step and action kind.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
	}, []string{"workflow", "step", "kind"})
	m.claims = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flowrun_claims_total",
		Help: "Runs this process claimed (a run is claimed again each time it resumes).",
	})
	m.reclaims = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowrun_lease_reclaims_total",
		Help: "Runs this process claimed that a worker which is gone had left with an attempt running, by workflow.",
	}, []string{"workflow"})
	m.leaseLosses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowrun_lease_losses_total",
		Help: "Runs this process was working on whose lease another process took (the process was fenced off and stopped working on them), by workflow.",
	}, []string{"workflow"})
	m.pruned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowrun_runs_pruned_total",
		Help: "Finished runs this process deleted by retention (child runs included), by workflow.",
	}, []string{"workflow"})
	m.storeFailing = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "flowrun_store_failing",
		Help: "1 while this worker's claims or commits fail (the store is down, locked or full), 0 once it answers again.",
	})
	m.commits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flowrun_store_commit_duration_seconds",
		Help:    "How long the engine's store commits took (a commit carries the transitions of one or more runs), by result (ok, error).",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
	}, []string{"result"})
	m.fireLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flowrun_schedule_fire_lag_seconds",
		Help:    "How long after its slot a schedule's run was started, by workflow.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"workflow"})
	m.readErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flowrun_metrics_store_read_errors_total",
		Help: "Scrapes whose read of the store's figures (due runs, breakers, dead letters) failed; those figures are left out of that scrape.",
	})
	m.reg.MustRegister(m.runsStarted, m.runsFinished, m.attempts, m.attemptDuration, m.claims, m.reclaims,
		m.leaseLosses, m.pruned, m.storeFailing, m.commits, m.fireLag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.Read != nil {
		// The store collector serves the read errors after its read, so
		// the scrape whose read failed counts it: the collectors of one
		// scrape run concurrently.
		m.reg.MustRegister(&storeCollector{m: m, d: newStoreDescs()})
	} else {
		m.reg.MustRegister(m.readErrors)
	}
	// Result labels that are always there read 0 rather than being absent.
	m.commits.WithLabelValues("ok")
	return m
}

// Registry returns the registry, for tests and for serving it elsewhere.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ServeHTTP serves the metrics in the Prometheus exposition format.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}

// RunStarted counts a run's first claim.
func (m *Metrics) RunStarted(r telemetry.Run) { m.runsStarted.WithLabelValues(r.Workflow).Inc() }

// RunEnded counts a run's end by its status.
func (m *Metrics) RunEnded(r telemetry.Run) {
	m.runsFinished.WithLabelValues(r.Workflow, r.Status).Inc()
}

// AttemptEnded counts an attempt by outcome and observes its duration.
func (m *Metrics) AttemptEnded(a telemetry.Attempt) {
	m.attempts.WithLabelValues(a.Run.Workflow, a.Step, a.Kind, a.Status).Inc()
	if !a.Started.IsZero() && !a.Finished.Before(a.Started) {
		m.attemptDuration.WithLabelValues(a.Run.Workflow, a.Step, a.Kind).Observe(a.Finished.Sub(a.Started).Seconds())
	}
}

// Claimed counts claimed runs.
func (m *Metrics) Claimed(n int) { m.claims.Add(float64(n)) }

// Reclaimed counts a run taken over from a gone worker.
func (m *Metrics) Reclaimed(workflow string) { m.reclaims.WithLabelValues(workflow).Inc() }

// LeaseLost counts a run whose lease another process took.
func (m *Metrics) LeaseLost(l telemetry.LeaseLoss) {
	m.leaseLosses.WithLabelValues(l.Run.Workflow).Inc()
}

// RunsPruned counts runs deleted by retention.
func (m *Metrics) RunsPruned(workflow string, n int) {
	m.pruned.WithLabelValues(workflow).Add(float64(n))
}

// StoreFailing sets flowrun_store_failing.
func (m *Metrics) StoreFailing(error) { m.storeFailing.Set(1) }

// StoreRecovered clears flowrun_store_failing.
func (m *Metrics) StoreRecovered(time.Duration) { m.storeFailing.Set(0) }

// Committed observes a store commit's duration.
func (m *Metrics) Committed(d time.Duration, failed bool) {
	res := "ok"
	if failed {
		res = "error"
	}
	m.commits.WithLabelValues(res).Observe(d.Seconds())
}

// ScheduleFired observes a schedule's fire lag.
func (m *Metrics) ScheduleFired(workflow string, lag time.Duration) {
	m.fireLag.WithLabelValues(workflow).Observe(lag.Seconds())
}

// ScheduleSlotFailed is not counted: the worker logs it.
func (m *Metrics) ScheduleSlotFailed(string, string, time.Time, error) {}
