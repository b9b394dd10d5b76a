package interp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// httpCall is an evaluated http action.
type httpCall struct {
	method  string
	url     string
	headers map[string]string
	body    []byte
	hasBody bool
	isJSON  bool
	expect  []int
	idem    string
	// traceparent is the attempt's span as W3C trace context, sent as
	// the traceparent header unless the step sets one ("" for none).
	traceparent string
	red         *redactor // the run's secrets, for messages and the body's cut

	// secretHeaders are the headers (canonical names) that carry a
	// secret: a secret's value is in them, or their template reads
	// secrets. A redirect to another origin drops them (checkRedirect).
	secretHeaders map[string]bool
	secretBody    bool // the body carries a secret (as secretHeaders)
	noRedirects   bool // follow_redirects = false: a 3xx is the response
	// event is the CloudEvent an emit step sends (nil for others): it is
	// in the output as event.
	event map[string]any
}

func (sc *scheduler) prepareHTTP(ctx context.Context, h *graph.HTTPAction, a *expr.Activation) (*httpCall, *stepError) {
	bad := func(what string, err error) *stepError {
		return &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate http %s: %v", what, err)}
	}
	c := &httpCall{method: h.Method, expect: h.Expect, headers: map[string]string{}, red: sc.red,
		secretHeaders: map[string]bool{}, noRedirects: h.NoRedirects}
	if c.method == "" {
		c.method = http.MethodGet
	}
	var err error
	if c.url, err = sc.l.prog.EvalURL(ctx, h, a); err != nil {
		var ue *expr.URLError
		if !errors.As(err, &ue) {
			return nil, bad("url", err)
		}
		return nil, &stepError{Kind: "http", Message: "the request could not be built: " + c.urlError(ue)}
	}
	if h.Headers != nil {
		v, err := sc.evalValue(ctx, h.Headers, a)
		if err != nil {
			return nil, bad("headers", err)
		}
		m, _ := v.(map[string]any)
		for k, x := range m {
			c.headers[k] = plainString(x)
			var tmpl *graph.Value
			if h.Headers.Object != nil {
				tmpl = h.Headers.Object[k]
			} else {
				tmpl = h.Headers // one {{ }} makes the whole object
			}
			if c.holdsSecret(c.headers[k]) || sc.readsSecret(tmpl) {
				c.secretHeaders[http.CanonicalHeaderKey(k)] = true
			}
		}
	}
	if au := h.Auth; au != nil {
		text := func(what string, v *graph.Value) (string, *stepError) {
			return sc.evalText(ctx, v, a, "http auth "+what)
		}
		var cred string
		if au.Bearer != nil {
			tok, se := text("bearer", au.Bearer)
			if se != nil {
				return nil, se
			}
			cred = tok
			c.headers["Authorization"] = "Bearer " + tok
		} else {
			user, se := text("username", au.Username)
			if se != nil {
				return nil, se
			}
			pass, se := text("password", au.Password)
			if se != nil {
				return nil, se
			}
			cred = base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
			c.headers["Authorization"] = "Basic " + cred
		}
		// The credential is a secret wherever it shows up (a server that
		// echoes the header back): the run's redactor learns it. A
		// redirect to another origin drops Authorization always
		// (redirectHeaders).
		sc.red = sc.red.with(cred)
		c.red = sc.red
	}
	if h.Body != nil {
		v, err := sc.evalValue(ctx, h.Body, a)
		if err != nil {
			return nil, bad("body", err)
		}
		c.hasBody = true
		if s, ok := v.(string); ok {
			c.body = []byte(s)
		} else {
			c.body, c.isJSON = mustJSON(v), true
		}
		c.secretBody = c.holdsSecret(string(c.body)) || sc.readsSecret(h.Body)
	}
	return c, nil
}

// copyBufs holds the buffers response bodies are read through: io.Copy
// would make one per request.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// runHTTP makes one request. The response body is kept up to limit bytes;
// a status outside expect (default 2xx) is an error of kind "http" whose
// output is the response.
func runHTTP(ctx context.Context, client *http.Client, c *httpCall, limit int64) (any, *stepError) {
	req, err := c.request(ctx)
	if err != nil {
		return nil, &stepError{Kind: "http", Message: "the request could not be built: " + c.buildError(err)}
	}
	cl := *client // the engine's client, with this request's redirect policy
	cl.CheckRedirect = c.checkRedirect
	resp, err := cl.Do(req)
	if err != nil {
		return nil, &stepError{Kind: "http", Message: fmt.Sprintf("%s %s failed: %s", c.method, c.shownURL(), c.transportError(req.URL.Host, err))}
	}
	defer resp.Body.Close()
	// The body is read whole or not at all: a step's result is what the
	// server answered (semantics §6). At most limit bytes (and what the
	// redactor must see past them) are read, plus one: a body over
	// limits.output_bytes fails the attempt without reading the rest, and a
	// body the attempt's timeout or a cancel cut off fails it (the flight
	// names that failure timeout or canceled) instead of completing with a
	// part of it. A body shorter than its Content-Length is a read error.
	w := &capWriter{limit: limit, red: c.red}
	buf := copyBufs.Get().(*[]byte)
	_, err = io.CopyBuffer(w, io.LimitReader(resp.Body, limit+int64(c.red.lookahead())+1), *buf)
	copyBufs.Put(buf)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &stepError{Kind: "http", Message: fmt.Sprintf("%s %s: the response body was cut off after %d bytes", c.method, c.shownURL(), w.total)}
		}
		return nil, &stepError{Kind: "http", Message: fmt.Sprintf("%s %s: reading the response failed: %s", c.method, c.shownURL(), c.transportError(req.URL.Host, err))}
	}
	if w.truncated() {
		st := resp.StatusCode
		return nil, &stepError{Kind: "output_limit", Status: &st, Message: fmt.Sprintf(
			"%s %s: the response body is over limits.output_bytes (%d bytes), so the step fails without reading the rest; raise limits.output_bytes, or ask the server for less",
			c.method, c.shownURL(), limit)}
	}
	headers := headerValues(resp.Header, func(_, v string) string { return v })
	var parsed any = w.String()
	if !w.truncated() {
		if j, ok := c.red.outputJSON(w.buf.Bytes()); ok {
			parsed = j
		}
	}
	out := map[string]any{"status": float64(resp.StatusCode), "headers": headers, "body": parsed, "request": c.sent(resp.Request)}
	if c.event != nil {
		out["event"] = c.event
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if len(c.expect) > 0 {
		ok = slices.Contains(c.expect, resp.StatusCode)
	}
	if !ok {
		want := "a 2xx status"
		if len(c.expect) > 0 {
			want = fmt.Sprintf("one of %v", c.expect)
		}
		st := resp.StatusCode
		return nil, &stepError{Kind: "http", Status: &st, Message: fmt.Sprintf("%s %s returned status %d, expected %s", c.method, c.shownURL(), st, want), Output: out}
	}
	return out, nil
}

// request builds the request c sends: its method, URL and body, the
// step's headers, and the Content-Type, Idempotency-Key and traceparent
// the engine adds where the step sets none.
func (c *httpCall) request(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if c.hasBody {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return nil, err
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if c.hasBody && req.Header.Get("Content-Type") == "" {
		if c.isJSON {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	if req.Header.Get("Idempotency-Key") == "" && c.idem != "" {
		req.Header.Set("Idempotency-Key", c.idem)
	}
	if req.Header.Get("Traceparent") == "" && c.traceparent != "" {
		req.Header.Set("Traceparent", c.traceparent)
	}
	return req, nil
}

// sentParts are the parts of an http step's output known before the
// request is made: request (as sent would show it) and, for an emit
// step, event. A mocked attempt's output takes them from here
// (MockCall.Sent); nil when the request cannot be built.
func (c *httpCall) sentParts() map[string]any {
	req, err := c.request(context.Background())
	if err != nil {
		return nil
	}
	parts := map[string]any{"request": c.sent(req)}
	if c.event != nil {
		parts["event"] = c.event
	}
	return parts
}

// sent is the request part of the output (language.md §5): the method,
// the final URL (after redirects) and the headers the last request
// carried, names in lower case and repeated values joined with ", " as
// the response's. What holds a secret is redacted here as
// everywhere, and the credential of Authorization, Proxy-Authorization and
// Cookie is never shown, secret or not: such a header names its scheme
// only ("Bearer ***").
func (c *httpCall) sent(req *http.Request) map[string]any {
	headers := headerValues(req.Header, func(k, v string) string {
		switch {
		case k == "Authorization" || k == "Proxy-Authorization":
			if scheme, _, ok := strings.Cut(v, " "); ok {
				return scheme + " ***"
			}
			return "***"
		case k == "Cookie" || c.secretHeaders[k]:
			return "***"
		}
		return c.red.text(v)
	})
	return map[string]any{"method": req.Method, "url": c.red.text(redactUserinfo(req.URL.String())), "headers": headers}
}

// headerValues is the output form of h: names in lower case, repeated
// values joined with ", ", each value as shown gives it (given the
// canonical name).
func headerValues(h http.Header, shown func(name, value string) string) map[string]any {
	out := make(map[string]any, len(h))
	for k, vs := range h {
		if len(vs) > 0 {
			out[strings.ToLower(k)] = shown(k, strings.Join(vs, ", "))
		}
	}
	return out
}

// readsSecret reports whether an expression of v reads a declared secret.
func (sc *scheduler) readsSecret(v *graph.Value) bool {
	for _, s := range sc.l.g.Secrets {
		if usesSecret(v, s.Name) {
			return true
		}
	}
	return false
}

// redirectHeaders are the headers a redirect to another origin never
// carries, besides those that carry a secret. net/http sets Referer to the
// previous URL, which may hold a secret in its path or query.
var redirectHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Referer"}

// checkRedirect is the request's redirect policy (language.md §8.4): with
// follow_redirects = false the 3xx is the response; past lang.MaxRedirects
// redirects the attempt fails; a redirect whose scheme, host or port
// differs from the first request's drops Authorization,
// Proxy-Authorization, Cookie, Referer and every header that carries a secret, and
// is refused when it would send again a body that carries a secret.
// net/http copies the first request's headers onto each redirect, so each
// hop is compared with that first request.
func (c *httpCall) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.noRedirects {
		return http.ErrUseLastResponse
	}
	if len(via) > expr.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects (the most an http action follows; set follow_redirects = false to take the 3xx response)", expr.MaxRedirects)
	}
	if origin(req.URL) != origin(via[0].URL) {
		if c.secretBody && req.GetBody != nil {
			// A 307 or 308 sends the body again (net/http sets GetBody
			// for those only): not one that carries a secret.
			return fmt.Errorf("the response redirected to another origin (%s) with a 307 or 308, which would send the body again, and the body carries a secret: the redirect was not followed", c.red.text(origin(req.URL)))
		}
		for _, h := range redirectHeaders {
			req.Header.Del(h)
		}
		for h := range c.secretHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// origin is a URL's scheme, host and port (the scheme's default port when
// none is written), lower-cased.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// urlError describes a url that could not be built: the problem with the
// built URL (redacted), or where a value could not be placed (which names
// the expression, never its value).
func (c *httpCall) urlError(ue *expr.URLError) string {
	if c.url == "" {
		return c.red.text(ue.Msg)
	}
	if ue.Parse != nil {
		return c.buildError(ue.Parse)
	}
	return fmt.Sprintf("the url %q is not one flowrun requests: %s", c.shownURL(), c.red.text(ue.Msg))
}

// Messages about a request never carry Go's rendering of its URL: the
// text of a *url.Error quotes the URL (escaping quotes and backslashes)
// and percent-encodes its path, so a secret in it would not be found by
// the redactor as it was put in. They name the URL as the workflow made
// it, redacted (shownURL), and only the cause inside a *url.Error.

// shownURL is the request's URL for messages, its secrets redacted.
func (c *httpCall) shownURL() string { return c.red.text(redactUserinfo(c.url)) }

// redactUserinfo hides the password of a URL's userinfo (user:xxxxx@host),
// as url.URL.Redacted does, whether or not it is a declared secret: an
// error or an event never shows it. Text that does not parse is left to
// the redactor.
func redactUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); !has {
		return raw
	}
	return u.Redacted()
}

// holdsSecret reports whether s contains a secret, in any of its forms.
func (c *httpCall) holdsSecret(s string) bool { return c.red.text(s) != s }

// buildError describes why the request could not be built. url.Parse's
// errors quote the URL and most quote the part of it that is wrong (a
// port, a host character, an escape): for a URL that holds a secret only
// the kind of problem is told (expr.URLParseProblem).
func (c *httpCall) buildError(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return c.red.text(err.Error())
	}
	if !c.holdsSecret(c.url) {
		return c.red.text(fmt.Sprintf("parse %q: %v", c.url, ue.Err))
	}
	return fmt.Sprintf("parse %q: %s", c.shownURL(), expr.URLParseProblem(ue.Err))
}

// transportError describes why a request failed, or its response could not
// be read: the cause inside the *url.Error (whose text is Go's rendering
// of the URL), redacted. When the request's host holds a secret the cause
// is only classified (hostFailure): resolver, dialer and TLS errors name
// the host, or its IDNA (punycode) form, which the redactor cannot know.
func (c *httpCall) transportError(host string, err error) string {
	for {
		var ue *url.Error
		if !errors.As(err, &ue) {
			break
		}
		if ue.Err == nil {
			return "the request failed"
		}
		err = ue.Err
	}
	if c.holdsSecret(host) {
		return hostFailure(err)
	}
	return c.red.text(err.Error())
}

// hostFailure describes a request's failure without naming any host or
// address.
func hostFailure(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var sysErr *os.SyscallError
	var verifyErr *tls.CertificateVerificationError
	var nameErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var certErr x509.CertificateInvalidError
	prefix := ""
	if errors.As(err, &opErr) {
		prefix = opErr.Op + " " + opErr.Net + ": "
	}
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded.Error()
	case errors.As(err, &dnsErr):
		return "looking up the host failed: " + dnsErr.Err
	case errors.As(err, &sysErr):
		return prefix + sysErr.Error() // e.g. "connect: connection refused"
	case errors.As(err, &verifyErr), errors.As(err, &nameErr), errors.As(err, &authErr), errors.As(err, &certErr):
		return "the server's TLS certificate was not accepted"
	case opErr != nil && opErr.Timeout():
		return prefix + "timed out"
	case opErr != nil:
		return prefix + "failed"
	}
	return "the request failed (the details are withheld: the host holds a secret)"
}
