package docfetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
)

// server answers /doc with "openapi: 3.0.3", /big with limit+1 bytes
// (with or without a Content-Length), /missing with 404, /slow after the
// request is given up, /loop by redirecting to itself, /ftp by redirecting
// to an ftp URL and /hop by redirecting to /doc. It records each request's
// headers.
func server(t *testing.T, limit int) (*httptest.Server, *[]http.Header) {
	t.Helper()
	var seen []http.Header
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		fmt.Fprint(w, "openapi: 3.0.3")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(limit+1))
		fmt.Fprint(w, strings.Repeat("x", limit+1))
	})
	mux.HandleFunc("/bigchunked", func(w http.ResponseWriter, r *http.Request) {
		for range limit + 1 {
			fmt.Fprint(w, "x")
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.test/doc", http.StatusFound)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/doc", http.StatusMovedPermanently)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestFetch(t *testing.T) {
	srv, seen := server(t, 64)
	fetch := New(context.Background(), Options{Timeout: 200 * time.Millisecond, MaxRedirects: 3})
	b, err := fetch(srv.URL+"/hop", 64)
	if err != nil || string(b) != "openapi: 3.0.3" {
		t.Fatalf("fetch through a redirect = %q, %v", b, err)
	}
	if h := (*seen)[0]; h.Get("Cookie") != "" || h.Get("Authorization") != "" || h.Get("User-Agent") != "flowrun" {
		t.Errorf("request headers = %v", h)
	}
	for _, tc := range []struct {
		path string
		want string
	}{
		{"/missing", "the server answered 404 Not Found"},
		{"/slow", "no answer within 200ms"},
		{"/loop", "it redirected more than 3 times"},
		{"/ftp", "it redirected to ftp://example.test/doc, which is not an http or https URL"},
	} {
		_, err := fetch(srv.URL+tc.path, 64)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.path, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%s: the error repeats the URL: %v", tc.path, err)
		}
	}
	for _, path := range []string{"/big", "/bigchunked"} {
		_, err := fetch(srv.URL+path, 64)
		var big *lang.FileTooLargeError
		if !errors.As(err, &big) || big.Limit != 64 {
			t.Errorf("%s: err = %v, want a FileTooLargeError", path, err)
		}
	}
	for _, raw := range []string{"file:///etc/passwd", "http://u:p@" + strings.TrimPrefix(srv.URL, "http://") + "/doc", "/doc"} {
		if _, err := fetch(raw, 64); err == nil {
			t.Errorf("%s was fetched", raw)
		}
	}
	if len(*seen) != 1 {
		t.Errorf("%d requests reached /doc, want 1", len(*seen))
	}
}

// A canceled context ends a fetch and says so.
func TestFetchCanceled(t *testing.T) {
	srv, _ := server(t, 64)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(ctx, Options{})(srv.URL+"/doc", 64)
	if err == nil || !strings.HasPrefix(err.Error(), "canceled") {
		t.Fatalf("err = %v", err)
	}
}

// A Cache answers from what it kept while it is fresh, errors included,
// and asks again once the ttl passed; with ttl 0 it keeps an answer for
// its life.
func TestCache(t *testing.T) {
	calls := 0
	answer := "a"
	fetch := func(url string, limit int64) ([]byte, error) {
		calls++
		if url == "http://h/missing" {
			return nil, errors.New("the server answered 404 Not Found")
		}
		return []byte(answer), nil
	}
	clk := clock.NewFake(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	c := NewCache(fetch, clk, time.Minute)
	get := func(url string) string {
		b, err := c.Fetch(url, 10)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	if get("http://h/d") != "a" || get("http://h/missing") != "the server answered 404 Not Found" || calls != 2 {
		t.Fatalf("first fetches: calls %d", calls)
	}
	answer = "b"
	clk.Advance(59 * time.Second)
	if get("http://h/d") != "a" || get("http://h/missing") == "" || calls != 2 {
		t.Fatalf("within the ttl: calls %d", calls)
	}
	clk.Advance(time.Second)
	if got := get("http://h/d"); got != "b" || calls != 3 {
		t.Fatalf("after the ttl: %q, calls %d", got, calls)
	}
	forever := NewCache(fetch, nil, 0)
	b1, _ := forever.Fetch("http://h/d", 10)
	answer = "c"
	b2, _ := forever.Fetch("http://h/d", 10)
	if string(b1) != "b" || string(b2) != "b" || calls != 4 {
		t.Fatalf("ttl 0: %q %q, calls %d", b1, b2, calls)
	}
}

// TestNewIsCheap: a load makes a fetcher whether or not the workflow names
// a document by URL, so New itself does no more than the allocations of its closures;
// the client and its copy of the default transport come at the first
// fetch.
func TestNewIsCheap(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() { _ = New(ctx, Options{}) })
	if allocs > 4 {
		t.Errorf("New: %v allocations, want at most 4 (the transport is cloned before any fetch)", allocs)
	}
}
