package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/server"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
	"github.com/flowrun/flowrun/telemetry/tracing"
	"github.com/flowrun/flowrun/web"
)

func serveCommand() *command {
	return &command{
		name:  "serve",
		args:  "[--listen 127.0.0.1:8080] [--worker N] [--no-auth] [--tls-cert FILE --tls-key FILE] [--log-format text|json] [--log-level LEVEL]",
		short: "serve the HTTP API: start, signal, cancel, retry, decide and watch runs",
		long: `Serve answers the HTTP API of spec/api.md on --listen: JSON under /v1 (the
same objects as --json prints), Server-Sent Events of a run's events, and
/healthz and /readyz without a token. Every /v1 route needs a bearer token
of the right scope (flowrun tokens create); --no-auth serves without one and
is allowed only on a loopback address. --tls-cert and --tls-key serve HTTPS.
--worker N also runs a worker of concurrency N in the process (as flowrun
worker --concurrency N); without it, other workers run the runs started.

SIGTERM or Ctrl-C stops it gracefully: it accepts no more connections, ends
the event streams (their clients resume with Last-Event-ID), lets the
requests in flight finish, then drains the worker for up to --grace. A second
signal stops it at once.

Connections are bounded in all (--max-conns) and per client address
(--max-conns-per-client): one over a bound is answered 503 at once and
closed, so a flood of slow clients cannot stop the others, health probes
included, from being served.

/metrics serves Prometheus metrics without a token, as /healthz does (counts
by workflow and step; no run's data): spec/observability.md lists them. It
logs to stderr through log/slog: --log-format text (key=value, the default)
or json, --log-level debug, info, warn or error.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			listen := fs.String("listen", "127.0.0.1:8080", "the address to listen on, HOST:PORT (port 0 picks a free one)")
			worker := fs.Int("worker", 0, "also run a worker of this concurrency in the process (0: none)")
			noAuth := fs.Bool("no-auth", false, "serve without tokens; only with a loopback --listen")
			tlsCert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
			tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert")
			grace := fs.Duration("grace", 30*time.Second, "how long a stop lets requests and actions in flight finish")
			headerTimeout := fs.Duration("read-header-timeout", 10*time.Second, "how long a client may take to send its request headers")
			idle := fs.Duration("idle-timeout", 2*time.Minute, "how long an idle keep-alive connection stays open")
			maxBody := fs.Int64("max-body", 1<<20, "the largest request body read, in bytes; larger is refused with 413")
			rate := fs.Float64("rate", 100, "requests a second one token may make on average (twice that at once)")
			addrFile := fs.String("addr-file", "", "write the address listened on to this file once listening (for scripts, with port 0)")
			maxConns := fs.Int("max-conns", 0, "the most connections held at once (default: 1024, or less to stay under the open-file limit)")
			perClient := fs.Int("max-conns-per-client", 0, "the most connections one client address holds at once (default: a quarter of --max-conns)")
			workDir := fs.String("work-dir", "", "where the exec steps of versions applied through the API (apply --server) start (default: the working directory)")
			retention := addRetentionFlags(fs)
			logs := addLogFlags(fs)
			execUser := e.execUserFlag(fs)
			return func(ctx context.Context, args []string) error {
				if err := execUser(); err != nil {
					return err
				}
				if len(args) > 0 {
					return usageErrorf("serve takes no arguments, got %q", args[0]).hint("Run: flowrun serve [--listen 127.0.0.1:8080]")
				}
				host, _, err := net.SplitHostPort(*listen)
				if err != nil {
					return usageErrorf("--listen %q is not HOST:PORT: %v", *listen, err).hint("Pass --listen 127.0.0.1:8080, or :8080 for every interface.")
				}
				if *noAuth && !loopback(host) {
					return usageErrorf("--no-auth is allowed only with a loopback --listen, got %q", *listen).
						hint("Listen on 127.0.0.1 (or ::1, localhost) without auth, or create a token with: flowrun tokens create NAME")
				}
				if (*tlsCert == "") != (*tlsKey == "") {
					return usageErrorf("--tls-cert and --tls-key go together").hint("Pass both, or neither for plain HTTP.")
				}
				var certs []tls.Certificate
				if *tlsCert != "" {
					c, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
					if err != nil {
						return usageErrorf("--tls-cert %s / --tls-key %s: %v", *tlsCert, *tlsKey, err).hint("Pass a PEM certificate and its PEM private key.")
					}
					certs = []tls.Certificate{c}
				}
				switch {
				case *worker < 0:
					return usageErrorf("--worker must be 0 or more, got %d", *worker).hint("Pass --worker 16 to run runs in this process.")
				case *grace < 0:
					return usageErrorf("--grace must not be negative, got %s", *grace).hint("Pass a duration such as --grace 30s.")
				case *headerTimeout <= 0:
					return usageErrorf("--read-header-timeout must be more than 0, got %s", *headerTimeout).hint("Pass a duration such as --read-header-timeout 10s.")
				case *idle <= 0:
					return usageErrorf("--idle-timeout must be more than 0, got %s", *idle).hint("Pass a duration such as --idle-timeout 2m.")
				case *maxBody < 1:
					return usageErrorf("--max-body must be at least 1, got %d", *maxBody).hint("Pass --max-body 1048576 for 1 MiB.")
				case *rate <= 0:
					return usageErrorf("--rate must be more than 0, got %g", *rate).hint("Pass --rate 100.")
				}
				retain, err := retention.options()
				if err != nil {
					return err
				}
				dir, err := serveWorkDir(*workDir)
				if err != nil {
					return err
				}
				conns, err := connLimits(*maxConns, *perClient)
				if err != nil {
					return err
				}
				lg, err := logs.logger(e.stderr, e.clock)
				if err != nil {
					return err
				}
				tr, err := e.openTracing(ctx)
				if err != nil {
					return err
				}
				return e.serve(ctx, serveConfig{log: lg, tracer: tr,
					listen: *listen, worker: *worker, noAuth: *noAuth, certs: certs, grace: *grace,
					headerTimeout: *headerTimeout, idle: *idle, maxBody: *maxBody, rate: *rate, addrFile: *addrFile,
					retain: retain, workDir: dir, conns: conns,
				})
			}
		},
	}
}

type serveConfig struct {
	retain        interp.RetainOptions
	log           *slog.Logger
	tracer        *tracing.Tracer // nil: no traces
	listen        string
	worker        int
	noAuth        bool
	certs         []tls.Certificate
	grace         time.Duration
	headerTimeout time.Duration
	idle          time.Duration
	maxBody       int64
	rate          float64
	addrFile      string
	workDir       string // absolute
	conns         server.ConnLimits
}

// connLimits checks --max-conns and --max-conns-per-client and fills in
// their defaults: at most 1024 connections, and 64 fewer than the
// open-file limit leaves (the store, the log and the programs of steps
// need some), with a quarter of them for one client address.
func connLimits(total, perClient int) (server.ConnLimits, error) {
	switch {
	case total < 0:
		return server.ConnLimits{}, usageErrorf("--max-conns must be 1 or more, got %d", total).hint("Pass --max-conns 1024, or leave it out for the default.")
	case perClient < 0:
		return server.ConnLimits{}, usageErrorf("--max-conns-per-client must be 1 or more, got %d", perClient).hint("Pass --max-conns-per-client 256, or leave it out for the default.")
	}
	if total == 0 {
		total = 1024
		if n := openFileLimit(); n > 0 {
			total = min(total, max(n-64, 16))
		}
	}
	if perClient == 0 {
		perClient = max(total/4, 1)
	}
	if perClient > total {
		return server.ConnLimits{}, usageErrorf("--max-conns-per-client %d is more than --max-conns %d", perClient, total).hint("Give one client at most the total.")
	}
	return server.ConnLimits{Total: total, PerClient: perClient}, nil
}

// serveWorkDir checks --work-dir (an existing directory; "" is the
// working directory) and makes it absolute.
func serveWorkDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErrorf("--work-dir %q: %v", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", usageErrorf("--work-dir %q is not a directory", dir).hint("Pass the directory the exec steps of versions applied through the API should start in.")
	}
	return abs, nil
}

// loopback reports whether a --listen host is a loopback address only.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serve runs the API server (and the worker) until a signal stops it.
func (e *env) serve(ctx context.Context, c serveConfig) error {
	defer closeTracing(c.tracer, c.log) // whatever ends serve, a mistake of the user's included
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	// Listen first: an address in use is the user's mistake, found before
	// the store is opened (or created).
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return usageErrorf("cannot listen on %s: %v", c.listen, err).hint("Pass --listen with a free HOST:PORT (port 0 picks one).")
	}
	defer ln.Close() // a no-op once the server has closed it
	if note := e.newStoreNote(); note != "" {
		c.log.Info(note, "db", store.ShownDSN(e.dsn))
	}
	st, err := e.openStore(ctx, true)
	if err != nil {
		return err
	}
	lg := c.log
	m := e.newMetrics(st)
	var obs telemetry.Observer = m
	if c.tracer != nil {
		obs = telemetry.Multi(m, c.tracer)
	}
	eng := e.workerEngine(st, e.getenv("FLOWRUN_HOST"), 30*time.Second, lg, obs, c.tracer)
	api := server.New(server.Options{Engine: eng, Clock: e.clock, NoAuth: c.noAuth, MaxBody: c.maxBody, Rate: c.rate, Log: lg,
		WorkDir: c.workDir, MaxFileSize: e.workflowFileLimit()})
	api.Mount("GET /metrics", m)
	// The web dashboard (package web) beside the API, through the same
	// door, on the same listener.
	dash := web.New(web.Options{Door: api.Door(), Tokens: st.TokenLookup, NoAuth: c.noAuth, TLS: len(c.certs) > 0, Clock: e.clock, Log: lg})
	for _, p := range web.Patterns {
		api.Mount(p, dash)
	}
	// Connections are bounded before TLS: a refused one costs no
	// handshake (server.LimitListener).
	lim := c.conns
	lim.Plain, lim.Clock = len(c.certs) == 0, e.clock
	ln = server.LimitListener(ln, lim)
	scheme := "http"
	if len(c.certs) > 0 {
		scheme = "https"
		ln = tls.NewListener(ln, &tls.Config{Certificates: c.certs, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
	}
	hs := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: c.headerTimeout,
		IdleTimeout:       c.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(lg.Handler(), slog.LevelWarn),
	}

	var w *interp.Worker
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	if c.worker > 0 {
		w = interp.NewWorker(eng, interp.WorkerOptions{Concurrency: c.worker, Version: binaryVersion()})
		if err := w.Start(runCtx); err != nil {
			ln.Close()
			return fmt.Errorf("starting the worker: %w", err)
		}
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }() // ends when Shutdown or Close returns
	addr := ln.Addr().String()
	if c.addrFile != "" {
		// Whole or not there: a script waiting for the file must never
		// read it empty (serve.txtar once did, under load).
		if err := writeFileAtomic(c.addrFile, []byte(addr+"\n"), 0o600); err != nil {
			hs.Close()
			return usageErrorf("--addr-file %s: %v", c.addrFile, unwrapPathError(err)).hint("Pass --addr-file with a path in a writable directory.")
		}
	}
	auth := "tokens required"
	if c.noAuth {
		auth = "no auth"
	}
	work := "no worker"
	if w != nil {
		work = fmt.Sprintf("a worker of up to %d runs", c.worker)
	}
	lg.Info(fmt.Sprintf("listening on %s://%s (%s, %s) over %s; stop with Ctrl-C or SIGTERM", scheme, addr, auth, work, store.ShownDSN(e.dsn)),
		"addr", addr, "db", store.ShownDSN(e.dsn))
	lg.Debug(describeRetention(c.retain))
	stopRetention := startRetention(ctx, eng, c.retain)
	defer stopRetention()

	var done <-chan struct{}
	if w != nil {
		done = w.Done()
	}
	select {
	case <-sigs:
	case err := <-served:
		return storeError("the server stopped", err)
	case <-done:
		hs.Close()
		return workerDied(ctx, w)
	}
	lg.Info(fmt.Sprintf("stopping: accepting no more connections, ending event streams, letting requests in flight finish for up to %s", c.grace))
	api.CloseStreams()
	shutCtx, cancelShut := context.WithCancel(ctx)
	defer cancelShut()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(shutCtx) }()
	timer := e.clock.NewTimer(c.grace)
	defer timer.Stop()
	select {
	case err = <-shut:
	case <-timer.C():
		cancelShut()
		err = <-shut
		hs.Close()
	case <-sigs:
		cancelShut()
		hs.Close()
		cancelRun()
		<-shut
		lg.Warn("stopped at once")
		return exitCode(ExitFailed)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		lg.Warn("requests still in flight were cut off", "error", err.Error())
	}
	if w != nil {
		if err := e.drainWorker(ctx, w, c.grace, sigs, cancelRun, lg); err != nil {
			return err
		}
	}
	lg.Info("stopped")
	return nil
}
