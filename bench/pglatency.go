package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
)

// errNoPostgres is the error of a Postgres scenario run without one.
var errNoPostgres = errors.New("this scenario needs a Postgres database: pass --pg postgres://USER@HOST:PORT/DATABASE (it works in a schema of its own and drops it)")

// pgRTTs are the round trips the scenario puts between the workers and
// Postgres: one host, one zone, one region.
var pgRTTs = []time.Duration{0, time.Millisecond, 5 * time.Millisecond}

// pgWorkers are the numbers of worker processes measured at each round
// trip.
var pgWorkers = []int{1, 2, 4}

// pgLatencyScenario measures how flowrun scales when its Postgres store is
// on another host: for each round trip of pgRTTs (added by a proxy of its
// own in front of the server, half each way) and each number of worker
// processes of pgWorkers, it enqueues runs of a 10-step chain in a fresh
// schema, starts the workers (`flowrun worker`, concurrency 8 each)
// through the proxy and times them until every run completed. Each
// figure is steps/s against one worker's at the same round trip.
func pgLatencyScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	if c.Postgres == "" {
		return errNoPostgres
	}
	runs := c.n(200, 16)
	const steps = 10
	r.Sizes["runs"] = runs
	r.Sizes["steps_per_run"] = steps
	base, err := url.Parse(c.Postgres)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		return fmt.Errorf("--pg: want a postgres:// URL")
	}
	for _, rtt := range pgRTTs {
		proxy, err := startLatencyProxy(hostPort(base), rtt)
		if err != nil {
			return fmt.Errorf("starting the latency proxy: %w", err)
		}
		var one float64
		for _, n := range pgWorkers {
			rate, err := pgBatch(ctx, c, dir, base, proxy.Addr(), n, runs, steps)
			if err != nil {
				proxy.Close()
				return fmt.Errorf("round trip %s, %d workers: %w", rtt, n, err)
			}
			if n == 1 {
				one = rate
				r.figure(Figure{Name: fmt.Sprintf("steps/s, 1 worker, %s round trip", rtt), Value: rate, Unit: "steps/s"})
				continue
			}
			f := Figure{Name: fmt.Sprintf("steps/s, %d workers, %s round trip", n, rtt), Value: rate, Unit: "steps/s",
				Baseline: &Baseline{Name: fmt.Sprintf("steps/s of 1 worker, %s round trip", rtt), Value: one, Unit: "steps/s"}}
			if n == 4 && rtt == 5*time.Millisecond {
				f.Target = &Target{Of: "ratio", Op: ">=", Limit: 3}
			}
			r.figure(f)
		}
		if err := proxy.Close(); err != nil {
			return err
		}
	}
	return nil
}

// hostPort is the server address of a postgres:// URL (port 5432 when
// none is given).
func hostPort(u *url.URL) string {
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "5432")
	}
	return u.Host
}

// pgBatch enqueues runs of a steps-long chain in a schema of its own,
// starts n workers whose store is reached through proxy, and returns the
// steps completed a second from the workers' start to the last run's end.
// The schema is dropped at the end.
func pgBatch(ctx context.Context, c Config, dir string, base *url.URL, proxy string, n, runs, steps int) (float64, error) {
	schema := fmt.Sprintf("bench_pg_%d_%d", os.Getpid(), now().UnixNano())
	admin, err := pgx.Connect(ctx, base.String())
	if err != nil {
		return 0, fmt.Errorf("connecting to --pg: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return 0, fmt.Errorf("creating schema %s: %w", schema, err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	direct := withSearchPath(base, schema, "")
	st, err := postgres.Open(ctx, direct, postgres.Options{})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	e := interp.New(st, interp.Options{Owner: store.Owner{Host: "bench", Worker: "b"}})
	// Runs differ by an input, so one batch starts them all at once.
	src := strings.Replace(setChain("chain", steps), "  limits {", "  input \"n\" { type = number }\n  limits {", 1)
	m, diags := lang.LoadFile("chain.hcl", []byte(src))
	if diags.HasErrors() {
		return 0, fmt.Errorf("compiling the chain: %s", diags.Error())
	}
	if _, err := e.StoreGraph(ctx, m.Workflows[0].Graph); err != nil {
		return 0, err
	}
	// The workers start first and idle: all of them are there when the
	// runs become due, in one batch.
	var ws []*workerProc
	defer func() {
		for _, w := range ws {
			w.stop()
		}
	}()
	wdir := filepath.Join(dir, schema)
	if err := os.MkdirAll(wdir, 0o700); err != nil {
		return 0, err
	}
	for i := range n {
		w, err := startWorkerWith(ctx, c, wdir, []string{fmt.Sprintf("FLOWRUN_HOST=bench-%d", i)},
			"--db", withSearchPath(base, schema, proxy), "--concurrency", "8")
		if err != nil {
			return 0, err
		}
		ws = append(ws, w)
	}
	items := make([]map[string]any, runs)
	for i := range items {
		items[i] = map[string]any{"n": i}
	}
	if _, err := e.StartRuns(ctx, interp.BatchParams{Workflow: "chain", Items: items, New: true}); err != nil {
		return 0, err
	}
	began := now()
	deadline := now().Add(10 * time.Minute)
	for {
		var done, bad int
		if err := admin.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status IN ('failed', 'canceled'))
			FROM `+pgx.Identifier{schema, "runs"}.Sanitize()).Scan(&done, &bad); err != nil {
			return 0, fmt.Errorf("counting the runs: %w", err)
		}
		if bad > 0 {
			return 0, fmt.Errorf("%d runs failed or were canceled", bad)
		}
		if done == runs {
			break
		}
		if now().After(deadline) {
			return 0, fmt.Errorf("%d of %d runs completed in 10 minutes", done, runs)
		}
		pause(5 * time.Millisecond)
	}
	took := now().Sub(began)
	return float64(runs*steps) / took.Seconds(), nil
}

// withSearchPath is the URL with search_path set to schema and, when host
// is not empty, the server address replaced by host.
func withSearchPath(base *url.URL, schema, host string) string {
	u := *base
	if host != "" {
		u.Host = host
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
