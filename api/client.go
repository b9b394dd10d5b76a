package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// ClientOptions are the settings of Dial. The zero value is a client with
// the defaults below.
type ClientOptions struct {
	// HTTP is the HTTP client (its transport, TLS roots); nil is a client
	// of its own. Its Timeout should be zero: Client bounds each call by
	// Timeout and leaves event streams unbounded.
	HTTP *http.Client
	// Timeout bounds each call but event streams; 0 is DefaultTimeout.
	Timeout time.Duration
	// MaxAnswer bounds the body of an answer read whole; 0 is
	// DefaultMaxAnswer.
	MaxAnswer int64
	// UserAgent names the caller in the server's log; "" is "flowrun".
	UserAgent string
}

// Defaults of ClientOptions.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxAnswer = 256 << 20
)

// Client is the Service of a flowrun serve, over HTTP (spec/api.md). It
// is safe for concurrent use.
type Client struct {
	base  *url.URL // scheme, host and path prefix, without a trailing /
	token string
	hc    *http.Client
	opts  ClientOptions
	// graphs are the stored graphs read (Records.Graph).
	graphs graphCache
}

// Dial returns a client of the flowrun serve at rawURL (such as
// https://flowrun.internal:8443, or one behind a path prefix) that sends
// token (a token of flowrun tokens create; "" for a server started with
// --no-auth). It checks the URL only: the first call meets the server.
//
// A token travels only over https, or over plain http to a loopback
// address: anything else could be read on the way, and Dial refuses it.
func Dial(rawURL, token string, opts ClientOptions) (*Client, error) {
	u, err := ParseServerURL(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" && token != "" && !loopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("server %s: a token is sent only over https, or over http to a loopback address (127.0.0.1, ::1, localhost), where nobody on the way can read it; serve HTTPS (flowrun serve --tls-cert FILE --tls-key FILE) and use https://", u.Redacted())
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxAnswer <= 0 {
		opts.MaxAnswer = DefaultMaxAnswer
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "flowrun"
	}
	hc := opts.HTTP
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 0, // a start that waits answers late; calls have their Timeout
			MaxIdleConns:          8,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}}
	}
	// The token must not follow a redirect to another host: the API
	// never redirects, so none is followed.
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: u, token: token, hc: &c, opts: opts}, nil
}

// ParseServerURL checks the URL of a server: http or https, a host, no
// user name or password (the token goes in a header), no query or
// fragment. A trailing / is dropped.
func ParseServerURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("server URL %q: %w", rawURL, stripURLError(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("server URL %q: it must start with https:// (or http:// for a server on this machine), such as https://flowrun.internal:8443", rawURL)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("server URL %q names no host, such as https://flowrun.internal:8443", rawURL)
	case u.User != nil:
		return nil, fmt.Errorf("server URL %q holds a user name or password; pass the token in FLOWRUN_TOKEN or with flowrun login instead", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("server URL %q has a query or fragment; give the server's address alone", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("server URL %q: port %q is not from 1 to 65535", rawURL, p)
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// stripURLError drops url.Error's repetition of the URL.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// loopbackHost reports whether host is a loopback name or address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is the server's URL, as given to Dial (without a password: it
// holds none).
func (c *Client) Server() string { return c.base.String() }

// Close implements Service.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// request builds a request of the API at path (under /v1, escaped by the
// caller) with query q.
func (c *Client) request(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Request, error) {
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, &ServerError{Server: c.Server(), Op: method + " " + path, Err: err}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// call sends a request and decodes its JSON answer into out (nil: the
// answer is read and dropped). An error answer is a *Problem, a failure
// to get a readable answer a *ServerError.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	_, err := c.callStatus(ctx, method, path, q, in, out)
	return err
}

// callStatus is call, and the answer's status.
func (c *Client) callStatus(ctx context.Context, method, path string, q url.Values, in, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("%s %s: encoding the request: %w", method, path, err)
		}
		body = strings.NewReader(string(b))
	}
	req, err := c.request(ctx, method, path, q, body)
	if err != nil {
		return 0, err
	}
	op := method + " " + path
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, c.transportError(ctx, op, err)
	}
	defer resp.Body.Close()
	b, err := c.readAnswer(resp)
	if err != nil {
		return 0, c.transportError(ctx, op, err)
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, c.problem(op, resp, b)
	}
	if err := c.checkJSON(resp, "application/json"); err != nil {
		return resp.StatusCode, &ServerError{Server: c.Server(), Op: op, Err: err}
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return resp.StatusCode, &ServerError{Server: c.Server(), Op: op, Err: fmt.Errorf("the answer is not the API's: %w", err)}
	}
	return resp.StatusCode, nil
}

// transportError words a failure to send a request or read its answer.
func (c *Client) transportError(ctx context.Context, op string, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within %s", c.opts.Timeout)
	} else {
		err = stripURLError(err)
	}
	return &ServerError{Server: c.Server(), Op: op, Err: err}
}

// readAnswer reads a whole answer, up to MaxAnswer.
func (c *Client) readAnswer(resp *http.Response) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(b)) > c.opts.MaxAnswer {
		return nil, fmt.Errorf("the answer is over %d bytes", c.opts.MaxAnswer)
	}
	return b, nil
}

// checkJSON says what is wrong when an answer is not of the media type
// want (HTML from a proxy or a web server at that address).
func (c *Client) checkJSON(resp *http.Response, want string) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == want {
		return nil
	}
	if ct == "" {
		ct = "no Content-Type"
	}
	return fmt.Errorf("the answer (%d, %s) is not flowrun's API: is %s the address of flowrun serve?", resp.StatusCode, ct, c.Server())
}

// problem reads an error answer: problem+json from flowrun serve, or a
// *ServerError when it is something else.
func (c *Client) problem(op string, resp *http.Response, b []byte) error {
	if err := c.checkJSON(resp, "application/problem+json"); err != nil {
		return &ServerError{Server: c.Server(), Op: op, Err: err}
	}
	p := &Problem{Server: c.Server()}
	if err := json.Unmarshal(b, &p.ProblemJSON); err != nil || p.Status != resp.StatusCode {
		return &ServerError{Server: c.Server(), Op: op, Err: fmt.Errorf("the %d answer is not the API's problem+json", resp.StatusCode)}
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		p.RetryAfter = time.Duration(s) * time.Second
	}
	if d := p.Decided; d != nil {
		return &interp.DecidedError{RunID: d.RunID, By: d.By, Choice: interp.Choice(d.Choice), NewRunID: d.NewRunID, Status: store.RunStatus(d.Status)}
	}
	if h := p.Held; h != nil {
		until, _ := time.Parse(time.RFC3339Nano, h.Until)
		return &store.LetterHeldError{ID: h.ID, Owner: h.Owner, Until: until}
	}
	if p.Signal != nil {
		return &SignalDataError{Message: p.Detail, Type: p.Signal.Type, Example: p.Signal.Example}
	}
	if p.Continue != "" {
		// The client words how to go on (ContinueHint), not the hint
		// the server wrote for any caller of the API.
		return &Refusal{Status: p.Status, Message: p.Detail, Field: p.Field, Continue: p.Continue}
	}
	if p.Hint != "" && p.Ref == nil && p.Deploy == nil {
		return &Refusal{Status: p.Status, Message: p.Detail, Hint: p.Hint, Field: p.Field}
	}
	if p.Deploy != nil {
		return &DeployError{Message: p.Detail, Hint: p.Deploy.Hint, Diagnostics: p.Deploy.Diagnostics, diags: diagnosticsOf(p.Deploy.Diags)}
	}
	if p.Ref != nil {
		if re, err := p.Ref.runRefError(); err == nil {
			return re
		}
	}
	return p
}

// runPath is the path of a run's route: /v1/runs/ID plus rest.
func runPath(id, rest string) string { return "/v1/runs/" + url.PathEscape(id) + rest }

// Runs implements RunReader.
func (c *Client) Runs(ctx context.Context, q RunsQuery) ([]interp.RunSummaryJSON, error) {
	v := url.Values{}
	if q.Workflow != "" {
		v.Set("workflow", q.Workflow)
	}
	if q.Key != "" {
		v.Set("key", q.Key)
	}
	if len(q.Statuses) > 0 {
		ss := make([]string, len(q.Statuses))
		for i, s := range q.Statuses {
			ss[i] = string(s)
		}
		v.Set("status", strings.Join(ss, ","))
	}
	if !q.Since.IsZero() {
		v.Set("since", interp.JSONTime(q.Since))
	}
	v.Set("children", strconv.FormatBool(q.Children))
	if q.Text != "" {
		v.Set("text", q.Text)
	}
	if !q.Until.IsZero() {
		v.Set("until", interp.JSONTime(q.Until))
	}
	var out []interp.RunSummaryJSON
	for {
		page := min(q.Limit-len(out), maxPage)
		if q.Limit == 0 {
			page = maxPage
		}
		v.Set("limit", strconv.Itoa(page))
		var ans struct {
			Runs       []interp.RunSummaryJSON `json:"runs"`
			NextCursor *string                 `json:"next_cursor"`
		}
		if err := c.call(ctx, http.MethodGet, "/v1/runs", v, nil, &ans); err != nil {
			return nil, err
		}
		out = append(out, ans.Runs...)
		if ans.NextCursor == nil || len(ans.Runs) == 0 || q.Limit > 0 && len(out) >= q.Limit {
			break
		}
		v.Set("cursor", *ans.NextCursor)
	}
	if out == nil {
		out = []interp.RunSummaryJSON{}
	}
	return out, nil
}

// maxPage is the largest page GET /v1/runs answers.
const maxPage = 1000

// Run implements RunReader.
func (c *Client) Run(ctx context.Context, ref string) (*interp.RunView, error) {
	v := &interp.RunView{}
	path, q := c.refPath(ref, "")
	if err := c.call(ctx, http.MethodGet, path, q, nil, v); err != nil {
		return nil, err
	}
	return v, nil
}

// refPath is the route of a run reference: /v1/runs/REF, or for a
// WORKFLOW/KEY reference (a path segment cannot hold its /)
// /v1/runs/by-ref?ref=REF.
func (c *Client) refPath(ref, rest string) (string, url.Values) {
	if strings.Contains(ref, "/") || ref == "" || ref == "." || ref == ".." {
		return "/v1/runs/by-ref" + rest, url.Values{"ref": {ref}}
	}
	return runPath(ref, rest), nil
}

// Offer implements RunReader.
func (c *Client) Offer(ctx context.Context, runID string) (interp.DecisionOffer, error) {
	var o OfferJSON
	if err := c.call(ctx, http.MethodGet, runPath(runID, "/decision"), nil, nil, &o); err != nil {
		return interp.DecisionOffer{}, err
	}
	return interp.DecisionOffer{Offer: o.Offer, Blocked: o.Blocked, Newest: o.Newest, Reason: o.Reason}, nil
}

// NearestWorkflows implements RunReader.
func (c *Client) NearestWorkflows(ctx context.Context, name string) (bool, []string, error) {
	var ws []struct {
		Workflow string `json:"workflow"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/workflows", nil, nil, &ws); err != nil {
		return false, nil, err
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Workflow
	}
	stored, nearest := interp.Nearest(name, names)
	return stored, nearest, nil
}
