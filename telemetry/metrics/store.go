package metrics

import (
	"context"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// storeDescs are the figures read from the store at each scrape
// (Options.Read): what every worker on the database shares, so each worker
// exposes the same values (aggregate them with max, not sum). They are
// made with the collector, not when any flowrun process starts.
type storeDescs struct {
	due, oldest, breaker, dead, workers *prometheus.Desc
}

func newStoreDescs() storeDescs {
	return storeDescs{
		due: prometheus.NewDesc("flowrun_due_runs",
			"Runs due now and not leased: what a claim could take (the queue depth), read from the store at the scrape.", nil, nil),
		oldest: prometheus.NewDesc("flowrun_oldest_due_run_age_seconds",
			"How long the oldest due run has been due (0 when none is), read from the store at the scrape.", nil, nil),
		breaker: prometheus.NewDesc("flowrun_breaker_state",
			"1 for the state each circuit breaker is in (closed, open, half-open), 0 for the others, read from the store at the scrape.",
			[]string{"breaker", "state"}, nil),
		dead: prometheus.NewDesc("flowrun_dead_letters_open",
			"Dead letters not yet retried or dropped, read from the store at the scrape.", nil, nil),
		workers: prometheus.NewDesc("flowrun_workers_live",
			"Worker processes that beat within their lease (flowrun workers), read from the store at the scrape.", nil, nil),
	}
}

// breakerStates are the states flowrun_breaker_state sets, in order.
var breakerStates = []string{"closed", "open", "half-open"}

// storeCollector reads the store's figures when scraped.
type storeCollector struct {
	m *Metrics
	d storeDescs
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.d.due
	ch <- c.d.oldest
	ch <- c.d.breaker
	ch <- c.d.dead
	ch <- c.d.workers
	c.m.readErrors.Describe(ch)
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	o := c.m.opts
	ctx, cancel := context.WithTimeout(context.Background(), o.ReadTimeout)
	defer cancel()
	s, err := o.Read(ctx)
	if err != nil {
		c.m.readErrors.Inc()
	}
	ch <- c.m.readErrors
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.d.due, prometheus.GaugeValue, float64(s.Due))
	age := 0.0
	if s.Due > 0 && !s.OldestDue.IsZero() {
		age = max(o.Now().Sub(s.OldestDue).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.d.oldest, prometheus.GaugeValue, age)
	names := make([]string, 0, len(s.Breakers))
	for n := range s.Breakers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, st := range breakerStates {
			v := 0.0
			if s.Breakers[n] == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.d.breaker, prometheus.GaugeValue, v, n, st)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.d.dead, prometheus.GaugeValue, float64(s.OpenDeadLetters))
	ch <- prometheus.MustNewConstMetric(c.d.workers, prometheus.GaugeValue, float64(s.LiveWorkers))
}
