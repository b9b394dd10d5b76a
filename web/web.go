package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Options configure New.
type Options struct {
	// Door is what the pages read and act through.
	Door api.Service
	// Tokens looks a token up by its hash (store.Store.TokenLookup).
	Tokens func(ctx context.Context, hash string) (store.Token, error)
	// NoAuth: the server takes requests without a token (serve
	// --no-auth, loopback only); nobody signs in.
	NoAuth bool
	// TLS: the server is reached over HTTPS (the cookies are Secure).
	TLS bool
	// Clock times sessions and waits (nil: the real clock).
	Clock clock.Clock
	// Log records failures (nil: none).
	Log *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	opts     Options
	clk      clock.Clock
	mux      *http.ServeMux
	pages    *template.Template
	sessions sessions
	// open is the one session of a server without auth (Options.NoAuth).
	open *session
	// doneKey signs the status messages of the pages actions land on.
	doneKey []byte
}

// Patterns are the http.ServeMux patterns the dashboard answers, for a
// server that serves other routes beside it (the API under /v1).
var Patterns = []string{"GET /{$}", "/login", "/logout", "/assets/", "/runs", "/runs/", "/live/", "/ops", "/ops/", "/workflows", "/workflows/"}

// New returns the dashboard's handler.
func New(opts Options) *Handler {
	h := &Handler{opts: opts, clk: opts.Clock, mux: http.NewServeMux(), doneKey: []byte(randomHex(32))}
	if h.clk == nil {
		h.clk = clock.Real{}
	}
	if h.opts.Log == nil {
		h.opts.Log = slog.New(slog.DiscardHandler)
	}
	h.pages = template.Must(template.New("").Funcs(funcs()).ParseFS(templateFS, "templates/*.html"))
	if opts.NoAuth {
		h.open = &session{name: "without auth", scope: store.ScopeAdmin, csrf: randomHex(32)}
	}
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err)
	}
	h.mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer(assets)))
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/runs", http.StatusSeeOther) })
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	h.page("GET /runs", h.runsPage)
	h.page("GET /runs/{id}", h.runPage)
	h.page("GET /runs/{id}/steps/{key}", h.stepPage)
	h.page("GET /runs/{id}/confirm/{action}", h.confirmPage)
	h.page("POST /runs/{id}/{action}", h.runAction)
	h.page("GET /ops", h.opsPage)
	h.page("GET /ops/dead-letters/{id}/confirm/{action}", h.deadLetterConfirm)
	h.page("POST /ops/dead-letters/{id}/{action}", h.deadLetterAction)
	h.page("GET /ops/schedules/{workflow}/{name}/confirm/{action}", h.scheduleConfirm)
	h.page("POST /ops/schedules/{workflow}/{name}/{action}", h.scheduleAction)
	h.page("GET /workflows", h.workflowsPage)
	h.page("GET /workflows/{name}", h.workflowPage)
	h.page("GET /workflows/{name}/versions/{version}", h.workflowPage)
	h.page("GET /ops/tokens", h.tokensPage)
	h.page("POST /ops/tokens", h.createToken)
	h.page("GET /ops/tokens/{name}/confirm/revoke", h.revokeConfirm)
	h.page("POST /ops/tokens/{name}/revoke", h.revokeToken)
	h.live("GET /live/runs", h.liveRuns)
	h.live("GET /live/runs/{id}", h.liveRun)
	h.live("GET /live/runs/{id}/output", h.liveOutput)
	return h
}

// securityHeaders are sent with every answer: no script but our own file,
// no inline style, no framing, no sniffing, no referrer.
func securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	if _, pattern := h.mux.Handler(r); pattern == "" {
		h.notFound(w, r, "There is no page at "+r.URL.Path+".")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// assetServer serves the embedded assets, cached for an hour.
func assetServer(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// pageFunc serves a page for a signed-in session.
type pageFunc func(w http.ResponseWriter, r *http.Request, s *session) error

// page registers a page that needs a session: without one a GET goes to
// the sign-in page (and back after it), anything else is refused. A POST
// must carry the session's CSRF token.
func (h *Handler) page(pattern string, f pageFunc) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s, err := h.current(w, r)
		if err != nil && !errors.Is(err, errSignedOut) {
			h.failErr(w, r, nil, err) // the store failed: 503, signed in still
			return
		}
		if err != nil {
			if r.Method == http.MethodGet {
				ended := ""
				if errors.Is(err, errRevoked) {
					ended = "&ended=revoked" // the sign-in page says why
				}
				http.Redirect(w, r, "/login?next="+urlQueryEscape(r.URL.RequestURI())+ended, http.StatusSeeOther)
				return
			}
			h.fail(w, r, nil, http.StatusUnauthorized, "You are not signed in, or your session ended. Sign in again.")
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			if err := r.ParseForm(); err != nil {
				h.fail(w, r, s, http.StatusBadRequest, "The form could not be read: "+err.Error())
				return
			}
			if !csrfOK(s, r) {
				h.fail(w, r, s, http.StatusForbidden, "The form's CSRF token is missing or wrong: nothing was done. Reload the page and try again.")
				return
			}
		}
		if err := f(w, r, s); err != nil {
			h.failErr(w, r, s, err)
		}
	})
}

// live registers a JSON endpoint of the live pages.
func (h *Handler) live(pattern string, f pageFunc) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s, err := h.current(w, r)
		if err != nil && !errors.Is(err, errSignedOut) {
			h.opts.Log.Warn("live page update failed", "path", r.URL.Path, "error", err)
			http.Error(w, `{"error":"the server could not read the store"}`, http.StatusServiceUnavailable)
			return
		}
		if err != nil {
			http.Error(w, `{"error":"not signed in"}`, http.StatusUnauthorized)
			return
		}
		if err := f(w, r, s); err != nil && r.Context().Err() == nil {
			h.opts.Log.Warn("live page update failed", "path", r.URL.Path, "error", err)
			http.Error(w, `{"error":"the server could not read the store"}`, http.StatusServiceUnavailable)
		}
	})
}

// view is what every page template gets.
type view struct {
	Title   string
	Session *session
	Nav     string
	Flash   string
	Data    any
}

// render executes a page template into w (whole, so a failure midway
// sends an error page, not half a page).
func (h *Handler) render(w http.ResponseWriter, status int, name string, v view) {
	var b bytes.Buffer
	if err := h.pages.ExecuteTemplate(&b, name, v); err != nil {
		h.opts.Log.Error("rendering a page failed", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// fail answers an error page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	h.render(w, status, "error.html", view{Title: http.StatusText(status), Session: s, Data: errorView{Status: status, Message: msg}})
}

type errorView struct {
	Status  int
	Message string
	Nearest []string
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	s, _ := h.current(w, r)
	h.fail(w, r, s, http.StatusNotFound, msg)
}

// failErr words an error of the door as the CLI does: a run reference
// that names nothing is a 404 with its candidates, a refusal a 409 with
// its hint, a scope too small a 403, and a store fault a 503.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var re *interp.RunRefError
	var rf *api.Refusal
	var de *interp.DecidedError
	var sde *interp.SignalDataError
	var asd *api.SignalDataError
	var ie *interp.InputError
	var kue *interp.KeyInUseError
	var held *store.LetterHeldError
	switch {
	case errors.As(err, &held):
		h.fail(w, r, s, http.StatusConflict, sentence(held.Error())+" Nothing was done; the operations page shows how that retry ends.")
	case errors.As(err, &asd):
		h.fail(w, r, s, http.StatusUnprocessableEntity, sentence(asd.Message)+" Nothing was sent; go back and fix the payload.")
	case errors.As(err, &sde), errors.As(err, &ie):
		h.fail(w, r, s, http.StatusUnprocessableEntity, sentence(err.Error())+" Nothing was done; go back and fix it.")
	case errors.As(err, &kue):
		h.fail(w, r, s, http.StatusConflict, err.Error()+".")
	case errors.Is(err, interp.ErrInvalidRunRef), errors.Is(err, store.ErrAmbiguous):
		h.fail(w, r, s, http.StatusBadRequest, err.Error()+".")
	case errors.As(err, &re):
		ev := errorView{Status: http.StatusNotFound, Message: re.Message}
		for _, c := range re.Candidates {
			ev.Nearest = append(ev.Nearest, c.ID+" ("+c.Workflow+" "+c.Key+")")
		}
		ev.Nearest = append(ev.Nearest, re.Workflows...)
		h.render(w, http.StatusNotFound, "error.html", view{Title: "Not found", Session: s, Data: ev})
	case errors.As(err, &rf):
		msg := rf.Message
		switch {
		case rf.Continue != "":
			msg = sentence(msg) + " A worker of the server goes on with the unfinished run by itself."
		case rf.Hint != "":
			msg = sentence(msg) + " " + rf.Hint
		}
		status := rf.Status
		if status == 0 {
			status = http.StatusConflict
		}
		h.fail(w, r, s, status, msg)
	case errors.As(err, &de):
		h.fail(w, r, s, http.StatusConflict, de.Error())
	case errors.Is(err, errScope):
		// need's words, without the sentinel's ("scope too small: "),
		// and how to go on.
		msg := strings.TrimPrefix(err.Error(), errScope.Error()+": ")
		h.fail(w, r, s, http.StatusForbidden, sentence(capitalize(msg))+" Sign out and sign in with a token of that scope to act.")
	case errors.Is(err, store.ErrNotFound):
		h.fail(w, r, s, http.StatusNotFound, strings.TrimSuffix(err.Error(), ": "+store.ErrNotFound.Error())+".")
	case errors.Is(err, store.ErrConflict):
		h.fail(w, r, s, http.StatusConflict, strings.TrimSuffix(err.Error(), ": "+store.ErrConflict.Error())+".")
	default:
		// The store's text can name the database file or server: it
		// goes to the log, and the page gives its request id, as an
		// answer of the API does (security.md §11).
		id := api.NewRequestID()
		h.opts.Log.Error("a page failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err)
		h.fail(w, r, s, http.StatusServiceUnavailable, "The server could not read or write the store ("+api.Fault(err)+"; the server logged the detail under request id "+id+"). Nothing was lost; try again.")
	}
}

// errScope is an action the session's scope does not allow.
var errScope = errors.New("scope too small")

// need refuses an action the session's scope does not allow.
func need(s *session, scope store.TokenScope, what string) error {
	if s.can(scope) {
		return nil
	}
	return fmt.Errorf("%w: %s needs a token of scope %s or more; you signed in with %q, of scope %s", errScope, what, scope, s.name, s.scope)
}

// sentence ends msg with a full stop.
func sentence(msg string) string {
	if strings.HasSuffix(msg, ".") {
		return msg
	}
	return msg + "."
}

// capitalize starts msg with a capital letter (the engine's messages
// start in lower case, to follow "flowrun VERB: ").
func capitalize(msg string) string {
	if msg == "" {
		return msg
	}
	r, n := utf8.DecodeRuneInString(msg)
	return string(unicode.ToUpper(r)) + msg[n:]
}
