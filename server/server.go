package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Options configure a Server. The zero value of every field but Engine has
// a default.
type Options struct {
	// Engine starts, signals, cancels, retries and decides runs, and its
	// store is what the server reads.
	Engine *interp.Engine
	// Clock is the only source of time: rate limits, waits, SSE polling
	// (default clock.Real).
	Clock clock.Clock
	// NoAuth serves every route without a token (the CLI allows it only
	// on a loopback address).
	NoAuth bool
	// MaxBody is the largest request body read, in bytes (default 1 MiB);
	// a larger one is answered 413.
	MaxBody int64
	// BodyTimeout bounds the reading of a request's body, from the moment
	// its route takes it (default 30s): a client that stalls mid-body is
	// answered 408 and holds its connection no longer.
	BodyTimeout time.Duration
	// Rate is how many requests a token may make per second, on average
	// (default 100), and Burst how many at once (default 2*Rate).
	Rate  float64
	Burst int
	// MaxWait is the longest "wait" a start request may ask for (default
	// 5m).
	MaxWait time.Duration
	// WorkDir is where the exec steps of versions deployed through the
	// API (POST /v1/versions) start (default: the process's working
	// directory).
	WorkDir string
	// MaxFileSize bounds each workflow file of a deploy (0: the
	// language's default).
	MaxFileSize int64
	// Log receives the detail of every server error (5xx), which the
	// answer leaves out, under the request id the answer gives (default
	// slog.Default()).
	Log *slog.Logger
}

// Handler serves one route. It returns an error instead of writing one:
// the server answers it as problem+json.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Route is one API route.
type Route struct {
	// Method and Path are as in spec/openapi.yaml: "GET", "/v1/runs/{id}".
	Method string
	Path   string
	// Scope is the token scope the route needs; "" serves it without a
	// token (the health probes, the OpenAPI document, webhooks, which
	// check their own signature).
	Scope   store.TokenScope
	Handler Handler
	// MaxBody, when more than 0, bounds this route's request body instead
	// of Options.MaxBody (a deploy carries workflow files).
	MaxBody int64
}

// Server is the HTTP API. It is an http.Handler.
type Server struct {
	eng *interp.Engine
	// api is the one door the handlers read and steer runs through (the
	// CLI's, package api), over eng.
	door *api.Local
	st   store.Store
	clk  clock.Clock
	log  *slog.Logger
	opts Options

	mux    *http.ServeMux
	mu     sync.Mutex
	routes []Route
	limits *limiter

	// streams ends the SSE streams (Close).
	streams     context.Context
	stopStreams context.CancelFunc
	// feeds are the runs followed by event streams (feed.go).
	feeds feeds
}

// New returns a Server with the routes of the API registered.
func New(opts Options) *Server {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = 30 * time.Second
	}
	if opts.Rate <= 0 {
		opts.Rate = 100
	}
	if opts.Burst <= 0 {
		opts.Burst = int(2 * opts.Rate)
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = 5 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	s := &Server{
		eng: opts.Engine, door: api.NewLocal(opts.Engine, api.LocalOptions{WorkDir: opts.WorkDir, MaxFileSize: opts.MaxFileSize, Clock: opts.Clock}), st: opts.Engine.Store(), clk: opts.Clock, log: opts.Log, opts: opts,
		mux:    http.NewServeMux(),
		limits: newLimiter(opts.Clock, opts.Rate, opts.Burst),
	}
	s.streams, s.stopStreams = context.WithCancel(context.Background())
	s.health()
	s.api()
	s.hookRoutes()
	s.batchRoutes()
	return s
}

// Handle registers a route. It panics, as http.ServeMux does, on a pattern
// registered twice.
func (s *Server) Handle(rt Route) {
	s.mu.Lock()
	s.routes = append(s.routes, rt)
	s.mu.Unlock()
	s.mux.HandleFunc(rt.Method+" "+rt.Path, s.wrap(rt))
}

// Mount serves h at pattern (an http.ServeMux pattern) without auth, for a
// handler that is no route of the API (a metrics endpoint).
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Door is the one door the handlers read and steer runs through: a face
// served beside the API (the web dashboard) shares it, and with it the
// one watch of the store's commits.
func (s *Server) Door() *api.Local { return s.door }

// Routes returns the registered routes, in the order they were registered.
func (s *Server) Routes() []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Route(nil), s.routes...)
}

// CloseStreams ends every SSE stream, as a graceful stop begins: the
// streams' clients reconnect with Last-Event-ID to another server.
func (s *Server) CloseStreams() { s.stopStreams() }

// ServeHTTP refuses paths that would be cleaned into another route (a ".."
// or "." segment, an encoded slash or backslash) before routing: the
// mux would redirect them, and a client must not reach one route through
// the name of another.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := badPath(r.URL); msg != "" {
		s.writeError(w, r, Problemf(http.StatusBadRequest, "%s", msg))
		return
	}
	if p := s.browserCheck(r); p != nil {
		s.writeError(w, r, p)
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		// No route has the path, or not with this method: the mux's own
		// answers are text; answer problem+json instead.
		if allow := s.allowed(r); allow != "" {
			w.Header().Set("Allow", allow)
			s.writeError(w, r, Problemf(http.StatusMethodNotAllowed, "%s %s: the method is not allowed; use %s", r.Method, r.URL.Path, allow))
			return
		}
		s.writeError(w, r, Problemf(http.StatusNotFound, "no route %s %s; see /v1/openapi.json for the routes", r.Method, r.URL.Path))
		return
	}
	// The mux sets the path's wildcards (Request.PathValue) as it serves.
	s.mux.ServeHTTP(w, r)
}

// allowed lists the methods the path has routes for, or "".
func (s *Server) allowed(r *http.Request) string {
	var ms []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" {
			ms = append(ms, m)
		}
	}
	return strings.Join(ms, ", ")
}

// badPath says what is wrong with a request path, or "".
func badPath(u *url.URL) string {
	raw := u.EscapedPath()
	low := strings.ToLower(raw)
	if strings.Contains(low, "%2f") || strings.Contains(low, "%5c") || strings.Contains(raw, `\`) {
		return "the path has an encoded slash or a backslash; name runs, workflows and signals by their plain names"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." || seg == "." {
			return "the path has a \".\" or \"..\" segment; write the route's path as it is"
		}
	}
	if strings.Contains(u.Path, "//") {
		return "the path has an empty segment (//); write the route's path as it is"
	}
	return ""
}

// wrap adds to a route's handler the body limit, auth, the rate limit
// and the problem+json answer of its error.
func (s *Server) wrap(rt Route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		limit := s.opts.MaxBody
		if rt.MaxBody > 0 {
			limit = rt.MaxBody
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if r.ContentLength != 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
			// The body must arrive within BodyTimeout; the deadline is
			// lifted once it has, so a long answer (a start that waits)
			// is not cut.
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(s.clk.Now().Add(s.opts.BodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		if rt.Scope != "" {
			ar, err := s.authorize(r, rt.Scope)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r = ar
		}
		if p := jsonBody(r); p != nil {
			s.writeError(w, r, p)
			return
		}
		if err := rt.Handler(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// browserCheck refuses what a web page the user visits could make a
// browser send (spec/security.md §10): a request a browser marks
// cross-site (Sec-Fetch-Site) or whose Origin is another host than the
// one it was sent to; under --no-auth, a Host that is not a loopback name
// (a DNS-rebinding page reaching the server through its own name). The
// API's bodies are JSON only (jsonBody); webhooks (/hooks/) take bodies of
// any type, as signed requests from other servers do.
func (s *Server) browserCheck(r *http.Request) *Problem {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return Problemf(http.StatusForbidden, "a cross-site request (Sec-Fetch-Site: cross-site) is refused: a page of another site cannot act on this server")
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return Problemf(http.StatusForbidden, "a request from origin %q to %q is refused: a page of another site cannot act on this server", o, r.Host)
		}
	}
	if s.opts.NoAuth && !loopbackHost(r.Host) {
		return Problemf(http.StatusForbidden, "Host %q is not a loopback name: a server without auth answers only requests sent to localhost, 127.0.0.1 or [::1]", r.Host)
	}
	return nil
}

// jsonBody refuses a body sent to the API without Content-Type:
// application/json (or a +json type): a browser sends a form or text/plain
// cross-site without asking first, never JSON. Checked after the token, so
// a request without one is told that first.
func jsonBody(r *http.Request) *Problem {
	if !strings.HasPrefix(r.URL.Path, "/v1/") || r.ContentLength == 0 || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return Problemf(http.StatusUnsupportedMediaType, "the request body must be JSON sent with Content-Type: application/json, got %q", r.Header.Get("Content-Type"))
	}
	return nil
}

// loopbackHost reports whether a Host header names this machine's
// loopback: localhost, 127.0.0.0/8 or ::1, with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// deadlineBody lifts the connection's read deadline once the body has
// been read to its end (or failed).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return n, errBodyTimeout
		}
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// errBodyTimeout is a request body that did not arrive in time.
var errBodyTimeout = errors.New("the request body did not arrive in time")
