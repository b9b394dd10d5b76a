package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a fake OTLP/HTTP collector: it decodes every request as
// the collector's own ExportTraceServiceRequest, and answers with the
// status codes of answers in turn (200 once they run out).
type collector struct {
	mu       sync.Mutex
	requests []*http.Request
	exports  []*coltrace.ExportTraceServiceRequest
	answers  []int
	after    string // Retry-After of a retryable answer
	reply    []byte // body of a 200 answer
	block    chan struct{}
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.block != nil {
		select {
		case <-c.block:
		case <-r.Context().Done():
			return
		}
	}
	body, err := io.ReadAll(r.Body)
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	var ex coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &ex)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.requests = append(c.requests, r)
	c.exports = append(c.exports, &ex)
	code := http.StatusOK
	if len(c.answers) > 0 {
		code, c.answers = c.answers[0], c.answers[1:]
	}
	c.mu.Unlock()
	if code != http.StatusOK {
		if c.after != "" {
			w.Header().Set("Retry-After", c.after)
		}
		http.Error(w, "try later", code)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(c.reply)
}

func (c *collector) spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, ex := range c.exports {
		for _, rs := range ex.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = v.BoolValue
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = v.DoubleValue
		case *commonpb.AnyValue_ArrayValue:
			var vs []any
			for _, e := range v.ArrayValue.Values {
				vs = append(vs, e.GetStringValue())
			}
			out[kv.Key] = vs
		default:
			out[kv.Key] = kv.Value
		}
	}
	return out
}

// TestTracerExportsOverOTLPHTTP: New, configured by the environment
// getenv gives, sends the engine's spans to the collector at
// ENDPOINT/v1/traces as protobuf with the configured headers, gzip, the
// resource (service name), and each span's ids, parent, times, kind,
// attributes and status, decoded by the collector's own message.
func TestTracerExportsOverOTLPHTTP(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	t.Setenv("OTEL_SERVICE_NAME", "flowrun-test") // the SDK's resource reads the process's environment
	tr, err := New(context.Background(), envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":    srv.URL + "/base/",
		"OTEL_EXPORTER_OTLP_HEADERS":     "authorization=Bearer%20tok,x-team=flow",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
	}))
	if err != nil || tr == nil {
		t.Fatalf("New = %v, %v", tr, err)
	}
	parent := telemetry.NewTrace("RUN1")
	run := telemetry.Run{ID: "RUN1", Workflow: "deploy", Version: "1.0.0", Status: "failed", ErrorKind: "exec", ErrorType: "urn:flowrun:error:exec", ErrorStatus: 503, Created: t0, Finished: t0.Add(time.Minute), Trace: parent}
	tr.AttemptEnded(telemetry.Attempt{Run: run, StepKey: "call", Step: "call", Attempt: 2, Kind: "http", Status: "failed", ErrKind: "http_status",
		Started: t0.Add(time.Second), Finished: t0.Add(3 * time.Second)})
	tr.RunEnded(run)
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(col.requests) == 0 {
		t.Fatal("the collector got no request")
	}
	req := col.requests[0]
	if req.URL.Path != "/base/v1/traces" || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" ||
		req.Header.Get("Content-Encoding") != "gzip" || req.Header.Get("Authorization") != "Bearer tok" || req.Header.Get("X-Team") != "flow" {
		t.Errorf("request: %s %s, headers %v", req.Method, req.URL.Path, req.Header)
	}
	rs := col.exports[0].ResourceSpans[0]
	if got := attrMap(rs.Resource.Attributes)["service.name"]; got != "flowrun-test" {
		t.Errorf("resource service.name = %v", got)
	}
	if sc := rs.ScopeSpans[0].Scope; sc.GetName() != "github.com/flowrun/flowrun" {
		t.Errorf("scope = %v", sc)
	}
	spans := col.spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	by := map[string]*tracepb.Span{}
	for _, s := range spans {
		by[s.Name] = s
		if hex.EncodeToString(s.TraceId) != parent.TraceID {
			t.Errorf("span %s has trace %x, want %s", s.Name, s.TraceId, parent.TraceID)
		}
	}
	root, att := by["run deploy"], by["step call"]
	if root == nil || att == nil {
		t.Fatalf("spans %v", by)
	}
	if hex.EncodeToString(root.SpanId) != parent.SpanID || len(root.ParentSpanId) != 0 ||
		root.StartTimeUnixNano != uint64(t0.UnixNano()) || root.EndTimeUnixNano != uint64(t0.Add(time.Minute).UnixNano()) ||
		root.Kind != tracepb.Span_SPAN_KIND_INTERNAL || root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || root.Status.GetMessage() != "failed" {
		t.Errorf("root span: %v", root)
	}
	if a := attrMap(root.Attributes); a["flowrun.run.status"] != "failed" || a["flowrun.error.kind"] != "exec" || a["flowrun.run.id"] != "RUN1" ||
		a["flowrun.error.type"] != "urn:flowrun:error:exec" || a["flowrun.error.status"] != int64(503) {
		t.Errorf("root attributes: %v", a)
	}
	if hex.EncodeToString(att.SpanId) != telemetry.AttemptSpanID("RUN1", "call", 2) || hex.EncodeToString(att.ParentSpanId) != parent.SpanID ||
		att.Kind != tracepb.Span_SPAN_KIND_CLIENT || att.Status.GetMessage() != "http_status" ||
		att.StartTimeUnixNano != uint64(t0.Add(time.Second).UnixNano()) {
		t.Errorf("attempt span: %v", att)
	}
	if a := attrMap(att.Attributes); a["flowrun.attempt"] != int64(2) || a["flowrun.step.key"] != "call" || a["flowrun.action.kind"] != "http" {
		t.Errorf("attempt attributes: %v", a)
	}
	// The parent of both is remote (another process, or this one earlier).
	if att.Flags&uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK) == 0 || att.Flags&0xff != uint32(trace.FlagsSampled) {
		t.Errorf("attempt flags = %#x", att.Flags)
	}
}

// stubRes is the resource of stubSpans.
var stubRes = resource.NewSchemaless(attribute.String("service.name", "svc"), attribute.Int("replica", 3))

// stubSpans are three spans: a root, a child of it (its parent remote, as
// every parent here is), and an error span with attributes of several
// types.
func stubSpans() []*spanData {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid := func(b byte) trace.SpanID { return trace.SpanID{b, 1, 1, 1, 1, 1, 1, 1} }
	return []*spanData{
		{name: "a", tid: tid, sid: sid(1), kind: trace.SpanKindInternal, start: t0, end: t0.Add(time.Second),
			attrs: []attribute.KeyValue{attribute.Bool("b", true), attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"x", "y"})}},
		{name: "b", tid: tid, sid: sid(2), parent: sid(1), kind: trace.SpanKindClient, start: t0, end: t0},
		{name: "c", tid: tid, sid: sid(3), parent: sid(1), kind: trace.SpanKindInternal, start: t0, end: t0.Add(time.Minute),
			attrs: []attribute.KeyValue{attribute.Int("n", 7)}, code: codes.Error, desc: "boom"},
	}
}

func testExporter(t *testing.T, url string, env map[string]string) *exporter {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = url
	e, err := exporterConfig(envOf(env), func(string) ([]byte, error) { return nil, errors.New("no files here") })
	if err != nil {
		t.Fatal(err)
	}
	e.retry = retryPolicy{initial: time.Millisecond, max: 4 * time.Millisecond, maxWaits: time.Second}
	return e
}

// TestExporterEncodesEverySpanField: the resource, the scope, and each
// span's ids, parent, kind, times, attributes, status and flags reach the
// collector; the per-signal endpoint is used as it is.
func TestExporterEncodesEverySpanField(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := testExporter(t, srv.URL+"/custom", nil)
	if err := e.ExportSpans(context.Background(), stubRes, stubSpans()); err != nil {
		t.Fatal(err)
	}
	if len(col.requests) != 1 || col.requests[0].URL.Path != "/custom" || col.requests[0].Header.Get("Content-Encoding") != "" {
		t.Fatalf("requests: %v", col.requests)
	}
	ex := col.exports[0]
	if len(ex.ResourceSpans) != 1 || len(ex.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("grouping: %v", ex)
	}
	rs := ex.ResourceSpans[0]
	if a := attrMap(rs.Resource.Attributes); a["service.name"] != "svc" || a["replica"] != int64(3) {
		t.Errorf("resource: %v", a)
	}
	ss := rs.ScopeSpans[0]
	if ss.Scope.GetName() != "github.com/flowrun/flowrun" || len(ss.Spans) != 3 {
		t.Fatalf("scope: %v", ss)
	}
	a, b, c := ss.Spans[0], ss.Spans[1], ss.Spans[2]
	if a.Name != "a" || a.Kind != tracepb.Span_SPAN_KIND_INTERNAL || a.Status == nil || a.Status.Code != tracepb.Status_STATUS_CODE_UNSET ||
		len(a.ParentSpanId) != 0 || a.EndTimeUnixNano-a.StartTimeUnixNano != uint64(time.Second) || a.StartTimeUnixNano != uint64(t0.UnixNano()) ||
		!bytes.Equal(a.TraceId, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) || !bytes.Equal(a.SpanId, []byte{1, 1, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("span a: %v", a)
	}
	if m := attrMap(a.Attributes); m["b"] != true || m["f"] != 1.5 || len(m["ss"].([]any)) != 2 || m["ss"].([]any)[1] != "y" {
		t.Errorf("span a attributes: %v", m)
	}
	remote := uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	if a.Flags != uint32(trace.FlagsSampled)|uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK) {
		t.Errorf("span a flags = %#x", a.Flags)
	}
	if b.Kind != tracepb.Span_SPAN_KIND_CLIENT || !bytes.Equal(b.ParentSpanId, a.SpanId) || b.Flags&remote == 0 {
		t.Errorf("span b: %v", b)
	}
	if c.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || c.Status.GetMessage() != "boom" || attrMap(c.Attributes)["n"] != int64(7) {
		t.Errorf("span c: %v", c)
	}
}

// TestExporterRetries: 429, 502, 503 and 504 are sent again, honouring
// Retry-After, until the collector takes the batch; another error status
// is not, and is reported with the collector's message.
func TestExporterRetries(t *testing.T) {
	col := &collector{answers: []int{503, 429, 502, 504}, after: "0"}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := testExporter(t, srv.URL, nil)
	if err := e.ExportSpans(context.Background(), stubRes, stubSpans()); err != nil {
		t.Fatalf("after four retryable answers: %v", err)
	}
	if len(col.requests) != 5 {
		t.Errorf("%d requests, want 5", len(col.requests))
	}

	col = &collector{answers: []int{400}}
	srv2 := httptest.NewServer(col)
	defer srv2.Close()
	e = testExporter(t, srv2.URL, nil)
	err := e.ExportSpans(context.Background(), stubRes, stubSpans())
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "try later") {
		t.Errorf("a 400 answer: %v", err)
	}
	if len(col.requests) != 1 {
		t.Errorf("a 400 answer was sent %d times", len(col.requests))
	}

	// The waits are bounded: a collector that always answers 503 is given
	// up on.
	col = &collector{answers: []int{503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503}}
	srv3 := httptest.NewServer(col)
	defer srv3.Close()
	e = testExporter(t, srv3.URL, nil)
	e.retry.maxWaits = 10 * time.Millisecond
	if err := e.ExportSpans(context.Background(), stubRes, stubSpans()); err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Errorf("an always-503 collector: %v", err)
	}
}

// TestExporterWaitsRetryAfter: after a 503 with Retry-After: 120 the
// batch is sent again only once the (fake) clock has moved two minutes,
// however short the backoff.
func TestExporterWaitsRetryAfter(t *testing.T) {
	col := &collector{answers: []int{503}, after: "120"}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := testExporter(t, srv.URL, nil)
	fake := clock.NewFake(t0)
	e.clock = fake
	e.retry.maxWaits = time.Hour
	done := make(chan error, 1)
	go func() { done <- e.ExportSpans(context.Background(), stubRes, stubSpans()) }()
	waitUntil(t, "the exporter to wait on its clock", func() bool { return fake.Pending() == 1 })
	fake.Advance(119 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("the export ended before Retry-After: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	fake.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(col.requests) != 2 {
		t.Errorf("%d requests, want 2", len(col.requests))
	}
}

// TestRetryAfter: seconds, or a date measured from the answer's Date.
func TestRetryAfter(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "7")
	if got := retryAfter(h); got != 7*time.Second {
		t.Errorf("seconds: %v", got)
	}
	h.Set("Date", t0.Format(http.TimeFormat))
	h.Set("Retry-After", t0.Add(90*time.Second).Format(http.TimeFormat))
	if got := retryAfter(h); got != 90*time.Second {
		t.Errorf("date: %v", got)
	}
	h.Set("Retry-After", "soon")
	if got := retryAfter(h); got != 0 {
		t.Errorf("garbage: %v", got)
	}
}

// TestExporterPartialSuccess: spans the collector says it rejected are an
// error (the SDK's error handler reports it); an empty answer is success.
func TestExporterPartialSuccess(t *testing.T) {
	reply, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{PartialSuccess: &coltrace.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "too old"}})
	col := &collector{reply: reply}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := testExporter(t, srv.URL, nil)
	if err := e.ExportSpans(context.Background(), stubRes, stubSpans()); err == nil || !strings.Contains(err.Error(), "too old (2 spans rejected)") {
		t.Errorf("partial success: %v", err)
	}
	col.reply, _ = proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	if err := e.ExportSpans(context.Background(), stubRes, stubSpans()); err != nil {
		t.Errorf("full success: %v", err)
	}
}

// TestExporterTimeoutAndShutdown: a request is bounded by
// OTEL_EXPORTER_OTLP_TIMEOUT, and Shutdown ends one in flight.
func TestExporterTimeoutAndShutdown(t *testing.T) {
	col := &collector{block: make(chan struct{})}
	srv := httptest.NewServer(col)
	defer srv.Close()
	defer close(col.block)
	e := testExporter(t, srv.URL, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "50"})
	e.retry.maxWaits = 0
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := e.ExportSpans(ctx, stubRes, stubSpans()); err == nil {
		t.Errorf("an export to a collector that never answers succeeded")
	}

	e = testExporter(t, srv.URL, nil)
	done := make(chan error, 1)
	go func() { done <- e.ExportSpans(context.Background(), stubRes, stubSpans()) }()
	time.Sleep(50 * time.Millisecond)
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("an export ended by Shutdown reported success")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not end the export in flight")
	}
}

// TestExporterConfig: the TRACES_ form of a setting wins, the general
// endpoint gets /v1/traces, and a value flowrun cannot use is an error
// naming its variable.
func TestExporterConfig(t *testing.T) {
	noFiles := func(name string) ([]byte, error) { return nil, errors.New("open " + name + ": no such file") }
	e, err := exporterConfig(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "https://collector:4318",
		"OTEL_EXPORTER_OTLP_HEADERS":         "a=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "b=2",
		"OTEL_EXPORTER_OTLP_TIMEOUT":         "1000",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "",
	}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if e.url != "https://collector:4318/v1/traces" || len(e.headers) != 1 || e.headers["b"] != "2" || e.client.Timeout != 2500*time.Millisecond || !e.gzip {
		t.Errorf("config: url %s headers %v timeout %v gzip %v", e.url, e.headers, e.client.Timeout, e.gzip)
	}
	// The general endpoint's path gets /v1/traces, not its query.
	for endpoint, want := range map[string]string{
		"http://c:4318":              "http://c:4318/v1/traces",
		"http://c:4318/":             "http://c:4318/v1/traces",
		"https://c/otlp/":            "https://c/otlp/v1/traces",
		"https://c/otlp?tenant=a":    "https://c/otlp/v1/traces?tenant=a",
		"http://c:4318/?tenant=a%2F": "http://c:4318/v1/traces?tenant=a%2F",
	} {
		e, err := exporterConfig(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}), noFiles)
		if err != nil || e.url != want {
			t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%s: url %v (%v), want %s", endpoint, e, err, want)
		}
	}
	e, err = exporterConfig(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318"}), noFiles)
	if err != nil || e.url != "http://c:4318/" || e.client.Timeout != defaultTimeout || e.gzip {
		t.Errorf("defaults: %v, %v", e, err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318: want an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://c/x"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=ftp://c/x"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT=10s: want a number of milliseconds"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=zstd: want gzip or none"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,novalue"}, `OTEL_EXPORTER_OTLP_HEADERS: pair 2 of 2 is not a header=value pair`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE: open /ca.pem: no such file"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/k.pem"}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY: set both or neither"},
	} {
		_, err := exporterConfig(envOf(c.env), noFiles)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.env, err, c.want)
		}
	}
}

// TestExporterShowsNoSecret: the messages of a malformed header list, of
// an endpoint and of a failed export show no header value and no password
// of the endpoint's URL, and quote at most a bounded part of a collector's
// answer.
func TestExporterShowsNoSecret(t *testing.T) {
	const secret = "s3cr3tT0ken"
	for _, headers := range []string{
		"Authorization: Bearer " + secret,       // a colon for the equals sign
		"Authorization: Bearer " + secret + "=", // and a base64 padding
		"x-api-key=" + secret + "%zz",           // a bad escape
		"x-api-key=" + secret + "%0Ax",          // a newline, which net/http refuses at every export
	} {
		_, err := exporterConfig(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": headers}), nil)
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "%zz") {
			t.Errorf("headers %q: error %v", headers, err)
		}
	}
	for _, endpoint := range []string{"ftp://u:" + secret + "@c/x", "http://u:" + secret + "@c:port/x"} {
		_, err := exporterConfig(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint}), nil)
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
			t.Errorf("endpoint %q: error %v", endpoint, err)
		}
	}
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	tlsSrv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	_, err := exporterConfig(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://u:" + secret + "@c", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"}),
		func(string) ([]byte, error) { return ca, nil })
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "plain http://") {
		t.Errorf("a certificate for http://: error %v", err)
	}

	page := strings.Repeat("<p>an error page</p>\n", 1000) + "\x1b[2J"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, page)
	}))
	defer srv.Close()
	e := testExporter(t, strings.Replace(srv.URL, "http://", "http://flowrun:"+secret+"@", 1), map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20" + secret})
	err = e.ExportSpans(context.Background(), stubRes, stubSpans())
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "an error page") {
		t.Fatalf("a 401 answer: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, secret) || len(msg) > 2*maxAnswerText || strings.Contains(msg, "\x1b") {
		t.Errorf("a 401 answer's error (%d bytes) shows a secret, the whole page or a control character: %.300s", len(msg), msg)
	}
}
