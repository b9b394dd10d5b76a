package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/flowrun/flowrun/lang"
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
}

func (r *runner) prepareHTTP(ctx context.Context, h *lang.HTTPAction, a *lang.Activation) (*httpCall, *stepError) {
	bad := func(what string, err error) *stepError {
		return &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate http %s: %v", what, err)}
	}
	c := &httpCall{method: h.Method, expect: h.Expect, headers: map[string]string{}}
	if c.method == "" {
		c.method = http.MethodGet
	}
	var err error
	if c.url, err = r.evalString(ctx, h.URL, a); err != nil {
		return nil, bad("url", err)
	}
	if h.Headers != nil {
		v, err := r.evalValue(ctx, h.Headers, a)
		if err != nil {
			return nil, bad("headers", err)
		}
		m, _ := v.(map[string]any)
		for k, x := range m {
			c.headers[k] = plainString(x)
		}
	}
	if h.Body != nil {
		v, err := r.evalValue(ctx, h.Body, a)
		if err != nil {
			return nil, bad("body", err)
		}
		c.hasBody = true
		if s, ok := v.(string); ok {
			c.body = []byte(s)
		} else {
			c.body, c.isJSON = mustJSON(v), true
		}
	}
	return c, nil
}

// runHTTP makes one request. The response body is kept up to limit bytes;
// a status outside expect (default 2xx) is an error of kind "http" whose
// output is the response.
func runHTTP(ctx context.Context, client *http.Client, c *httpCall, limit int64) (any, *stepError) {
	var body io.Reader
	if c.hasBody {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return nil, &stepError{Kind: "http", Message: fmt.Sprintf("the request could not be built: %v", err)}
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
	resp, err := client.Do(req)
	if err != nil {
		return nil, &stepError{Kind: "http", Message: fmt.Sprintf("%s %s failed: %v", c.method, c.url, err)}
	}
	defer resp.Body.Close()
	w := &capWriter{limit: limit}
	if _, err := io.Copy(w, resp.Body); err != nil && ctx.Err() == nil {
		return nil, &stepError{Kind: "http", Message: fmt.Sprintf("%s %s: reading the response failed: %v", c.method, c.url, err)}
	}
	headers := map[string]any{}
	for k, vs := range resp.Header {
		if len(vs) > 0 {
			headers[strings.ToLower(k)] = vs[0]
		}
	}
	var parsed any = w.String()
	if w.dropped == 0 {
		var j any
		if b := bytes.TrimSpace(w.buf.Bytes()); len(b) > 0 && json.Unmarshal(b, &j) == nil {
			parsed = j
		}
	}
	out := map[string]any{"status": resp.StatusCode, "headers": headers, "body": parsed}
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
		return nil, &stepError{Kind: "http", Status: &st, Message: fmt.Sprintf("%s %s returned status %d, expected %s", c.method, c.url, st, want), Output: out}
	}
	return out, nil
}
