package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/flowrun/flowrun/clock"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP/HTTP exporter: spans are POSTed as a protobuf TracesData
// (otlpwire.go), which is wire-compatible with the collector's
// ExportTraceServiceRequest (both are field 1, repeated ResourceSpans). It is ours rather than the SDK's
// otlptracehttp, whose collector package links gRPC into every flowrun
// process; it honours the same OTEL_EXPORTER_OTLP_* settings.

const (
	// defaultTimeout bounds one request (OTEL_EXPORTER_OTLP_TIMEOUT).
	defaultTimeout = 10 * time.Second
	// maxRequestBytes is the largest export sent; a larger batch is
	// dropped with an error rather than sent.
	maxRequestBytes = 64 << 20
	// maxResponseBytes is the most of a response body read.
	maxResponseBytes = 4 << 20
)

// retryPolicy is when a failed export is sent again: after a 429, 502,
// 503 or 504 answer or a temporary network error, waiting the longer of an
// exponential backoff (randomized by half) and the answer's Retry-After,
// until the waits would exceed maxWaits or the export's context ends.
type retryPolicy struct {
	initial, max, maxWaits time.Duration
}

// defaultRetry is the SDK exporter's default policy.
var defaultRetry = retryPolicy{initial: 5 * time.Second, max: 30 * time.Second, maxWaits: time.Minute}

// exporter sends spans to an OTLP/HTTP collector.
type exporter struct {
	url      string
	shownURL string // url with any password masked, for messages
	headers  map[string]string
	gzip     bool
	client   *http.Client
	retry    retryPolicy
	clock    clock.Clock     // waits between retries
	stopped  context.Context // canceled by Shutdown: in-flight requests end
	shutdown context.CancelFunc
}

// exporterConfig reads the OTEL_EXPORTER_OTLP_* settings (the TRACES_
// form of each wins over the general one): the endpoint, HEADERS,
// TIMEOUT (milliseconds), COMPRESSION (gzip or none), CERTIFICATE (CA
// bundle), CLIENT_CERTIFICATE and CLIENT_KEY. A value flowrun cannot use
// is an error naming the variable.
func exporterConfig(getenv func(string) string, readFile func(string) ([]byte, error)) (*exporter, error) {
	get := func(name string) (string, string) {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + name, v
		}
		return "OTEL_EXPORTER_OTLP_" + name, strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	// A per-signal endpoint is used as it is; the general one is a base
	// URL whose path /v1/traces is appended to (after the path, not after
	// a query or a fragment).
	name, endpoint := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	base := endpoint == ""
	if base {
		name, endpoint = "OTEL_EXPORTER_OTLP_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s=%s: want an http:// or https:// URL such as http://127.0.0.1:4318", name, shownEndpoint(getenv(name)))
	}
	if base {
		u.Path, u.RawPath = strings.TrimSuffix(u.Path, "/")+"/v1/traces", ""
	}
	if u.Path == "" {
		u.Path = "/"
	}
	e := &exporter{url: u.String(), shownURL: u.Redacted(), retry: defaultRetry, clock: clock.Real{}}
	e.stopped, e.shutdown = context.WithCancel(context.Background())

	if name, v := get("HEADERS"); v != "" {
		if e.headers, err = parseHeaders(v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	timeout := defaultTimeout
	if name, v := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s=%s: want a number of milliseconds", name, v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	switch name, v := get("COMPRESSION"); v {
	case "gzip":
		e.gzip = true
	case "", "none":
	default:
		return nil, fmt.Errorf("%s=%s: want gzip or none", name, v)
	}
	tlsConf, err := tlsFromEnv(get, readFile)
	if err != nil {
		return nil, err
	}
	if tlsConf != nil && u.Scheme != "https" {
		return nil, fmt.Errorf("%s=%s: a certificate is set for a plain http:// endpoint; use https:// or unset the certificate", name, shownEndpoint(getenv(name)))
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tlsConf,
	}
	e.client = &http.Client{Transport: transport, Timeout: timeout}
	return e, nil
}

// shownEndpoint is an endpoint setting as a message may show it: its
// password masked, and nothing of it when it does not parse but holds
// user information (an @), which may be a password.
func shownEndpoint(v string) string {
	if !strings.Contains(v, "@") {
		return v
	}
	if u, err := url.Parse(strings.TrimSpace(v)); err == nil {
		return u.Redacted()
	}
	return "(not shown: it may hold a password)"
}

// tlsFromEnv reads the CA bundle and client key pair, or returns nil when
// none is set.
func tlsFromEnv(get func(string) (string, string), readFile func(string) ([]byte, error)) (*tls.Config, error) {
	var conf tls.Config
	set := false
	if name, file := get("CERTIFICATE"); file != "" {
		pem, err := readFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%s: no PEM certificate in the file", name, file)
		}
		set = true
	}
	certName, certFile := get("CLIENT_CERTIFICATE")
	keyName, keyFile := get("CLIENT_KEY")
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return nil, fmt.Errorf("%s and %s: set both or neither", certName, keyName)
		}
		cert, err := readFile(certFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", certName, err)
		}
		key, err := readFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyName, err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", certName, keyName, err)
		}
		conf.Certificates = []tls.Certificate{pair}
		set = true
	}
	if !set {
		return nil, nil
	}
	return &conf, nil
}

// parseHeaders reads key=value pairs separated by commas, the values
// URL-encoded (the OpenTelemetry format). Headers hold credentials, so an
// error names a pair by its place and shows none of its text (a mistaken
// "Authorization: Bearer TOKEN" is all name), and a value's error shows
// nothing of the value.
func parseHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	n := strings.Count(s, ",") + 1
	i := 0
	for pair := range strings.SplitSeq(s, ",") {
		i++
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) {
			return nil, fmt.Errorf("pair %d of %d is not a header=value pair with a header name of letters, digits and -_.!#$%%&'*+^`|~ (its text is not shown: it may hold a secret); write key1=value1,key2=value2 with the values URL-encoded", i, n)
		}
		val, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("the value of header %s is not URL-encoded (a %% must start %%XX, two hex digits); its text is not shown", k)
		}
		val = strings.TrimSpace(val)
		if strings.ContainsFunc(val, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			// net/http would refuse it at every export.
			return nil, fmt.Errorf("the value of header %s holds a control character (a newline, say) once decoded; its text is not shown", k)
		}
		h[k] = val
	}
	return h, nil
}

// ExportSpans sends one batch of spans of res, retrying as retry says; an
// error means the batch is dropped.
func (e *exporter) ExportSpans(ctx context.Context, res *resource.Resource, spans []*spanData) error {
	body := appendTracesData(nil, res, spans)
	if len(body) == 0 {
		return nil
	}
	if len(body) > maxRequestBytes {
		return fmt.Errorf("traces export: %d spans encode to %d bytes, more than the %d an export may send", len(spans), len(body), maxRequestBytes)
	}
	encoding := ""
	if e.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(body); err != nil {
			return fmt.Errorf("traces export: compressing: %w", err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("traces export: compressing: %w", err)
		}
		body, encoding = b.Bytes(), "gzip"
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.stopped, cancel)() // Shutdown ends the export
	var waited time.Duration
	next := e.retry.initial
	for {
		err := e.send(ctx, body, encoding)
		var again *retryable
		if err == nil || !errors.As(err, &again) {
			if err != nil {
				return fmt.Errorf("traces export: %w", err)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("traces export: %w: %w", context.Cause(ctx), err)
		}
		delay := next/2 + rand.N(next) // next, randomized by half
		next = min(2*next, e.retry.max)
		delay = max(delay, again.after)
		if e.retry.maxWaits > 0 && waited+delay > e.retry.maxWaits {
			return fmt.Errorf("traces export: gave up retrying after %s: %w", waited, err)
		}
		t := e.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("traces export: %w: %w", context.Cause(ctx), err)
		case <-t.C():
		}
		waited += delay
	}
}

// retryable is a failure worth sending the batch again for; after is the
// answer's Retry-After (0: none).
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() + " (will retry)" }
func (r *retryable) Unwrap() error { return r.err }

// send POSTs one export and reads the answer.
func (e *exporter) send(ctx context.Context, body []byte, encoding string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "flowrun OTLP/HTTP exporter")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Temporary() {
			return &retryable{err: err}
		}
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("reading the answer of %s: %w", e.shownURL, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if resp.Header.Get("Content-Type") != "application/x-protobuf" {
			return nil
		}
		return partialSuccess(answer)
	}
	err = fmt.Errorf("failed to send to %s: %s (body: %s)", e.shownURL, resp.Status, answerText(answer))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return &retryable{err: err, after: retryAfter(resp.Header)}
	}
	return err
}

// maxAnswerText is the most of an error answer's body an error quotes.
const maxAnswerText = 1 << 10

// answerText is an error answer's body as an error quotes it: trimmed,
// cut to maxAnswerText bytes (a collector or proxy may answer with a
// whole page), and quoted when it holds anything but printable text, so
// that it cannot write control sequences to a terminal.
func answerText(answer []byte) string {
	text := strings.TrimSpace(string(answer))
	if text == "" {
		return "(empty)"
	}
	cut := len(text) > maxAnswerText
	if cut {
		text = strings.ToValidUTF8(text[:maxAnswerText], "")
	}
	if strings.ContainsFunc(text, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		text = strconv.Quote(text)
	}
	if cut {
		text += fmt.Sprintf(" ... (%d bytes in all)", len(answer))
	}
	return text
}

// retryAfter reads a Retry-After header: seconds, or a date, which is
// measured from the answer's own Date (so no clock of ours is read).
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, int64(time.Hour/time.Second))) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	now, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return 0
	}
	return min(max(at.Sub(now), 0), time.Hour)
}

// partialSuccess decodes an ExportTraceServiceResponse (field 1:
// partial_success, whose field 1 is rejected_spans and field 2
// error_message) and reports rejected spans as an error.
func partialSuccess(b []byte) error {
	var rejected int64
	var msg string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(n))
			}
			b = b[n:]
			for len(ps) > 0 {
				pnum, ptyp, m := protowire.ConsumeTag(ps)
				if m < 0 {
					return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(m))
				}
				ps = ps[m:]
				switch {
				case pnum == 1 && ptyp == protowire.VarintType:
					v, m := protowire.ConsumeVarint(ps)
					if m < 0 {
						return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(m))
					}
					rejected, ps = int64(v), ps[m:]
				case pnum == 2 && ptyp == protowire.BytesType:
					v, m := protowire.ConsumeBytes(ps)
					if m < 0 {
						return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(m))
					}
					msg, ps = string(v), ps[m:]
				default:
					m := protowire.ConsumeFieldValue(pnum, ptyp, ps)
					if m < 0 {
						return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(m))
					}
					ps = ps[m:]
				}
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return fmt.Errorf("decoding the collector's answer: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	if rejected == 0 && msg == "" {
		return nil
	}
	if msg == "" {
		msg = "empty message"
	}
	return fmt.Errorf("OTLP partial success: %s (%d spans rejected)", msg, rejected)
}

// Shutdown ends the requests in flight (the batcher calls it once it has
// exported what was queued, or when its caller stops waiting for that).
func (e *exporter) Shutdown(ctx context.Context) error {
	e.shutdown()
	e.client.CloseIdleConnections()
	return ctx.Err()
}
