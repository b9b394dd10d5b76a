package docfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/flowrun/flowrun/lang"
)

// The defaults of Options.
const (
	// DefaultTimeout bounds a fetch, redirects and body included.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxRedirects is how many redirects a fetch follows.
	DefaultMaxRedirects = 5
)

// Options are the settings of New.
type Options struct {
	// Timeout bounds each fetch, from the request to the last byte read;
	// 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRedirects is how many redirects a fetch follows; 0 means
	// DefaultMaxRedirects, a negative value none.
	MaxRedirects int
	// Transport makes the requests; nil means a copy of
	// http.DefaultTransport (which honours the proxy environment).
	Transport http.RoundTripper
}

// New returns a fetcher for lang.LoadOptions.FetchDocument: each call
// fetches the document at its URL, under ctx (a canceled ctx ends a fetch
// at once) and opts' bounds.
func New(ctx context.Context, opts Options) lang.DocumentFetcher {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxRedirects := opts.MaxRedirects
	switch {
	case maxRedirects == 0:
		maxRedirects = DefaultMaxRedirects
	case maxRedirects < 0:
		maxRedirects = 0
	}
	// The client, and the copy of http.DefaultTransport it may need, is
	// made at the first fetch: most loads fetch nothing, and cloning a
	// transport sets up its HTTP/2 support.
	client := sync.OnceValue(func() *http.Client {
		transport := opts.Transport
		if transport == nil {
			transport = http.DefaultTransport.(*http.Transport).Clone()
		}
		return &http.Client{
			Transport: transport,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > maxRedirects {
					return fmt.Errorf("it redirected more than %d times", maxRedirects)
				}
				if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
					return fmt.Errorf("it redirected to %s, which is not an http or https URL", req.URL.Redacted())
				}
				return nil
			},
		}
	})
	return func(raw string, limit int64) ([]byte, error) {
		return fetch(ctx, client(), raw, limit, timeout)
	}
}

// fetch GETs raw and reads at most limit bytes of its body.
func fetch(ctx context.Context, client *http.Client, raw string, limit int64, timeout time.Duration) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("it is not a valid URL (%w)", unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("it is not an absolute http or https URL")
	}
	if u.User != nil {
		return nil, errors.New("it carries credentials, which a document URL must not")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", unwrap(err))
	}
	req.Header.Set("Accept", "application/json, application/yaml, application/x-yaml, text/yaml, */*;q=0.5")
	req.Header.Set("User-Agent", "flowrun")
	resp, err := client.Do(req)
	if err != nil {
		return nil, cause(ctx, err, timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, &lang.FileTooLargeError{Name: raw, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", cause(ctx, err, timeout))
	}
	if int64(len(b)) > limit {
		return nil, &lang.FileTooLargeError{Name: raw, Limit: limit}
	}
	return b, nil
}

// cause is why a request failed, without the URL net/http repeats: the
// timeout in words when it passed.
func cause(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", timeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("canceled (%w)", context.Cause(ctx))
	}
	return unwrap(err)
}

// unwrap drops the *url.Error around err, which names the method and URL.
func unwrap(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
