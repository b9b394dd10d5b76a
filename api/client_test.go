package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestClientBadServers: an answer that is not the API's (HTML, JSON of
// another shape), a server slower than the client's timeout, and a TLS
// certificate the client does not trust are each a *ServerError naming
// the server and what went wrong, and the token appears in none.
func TestClientBadServers(t *testing.T) {
	const token = "flowrun_secret-token-value"
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>proxy error</html>"))
	}))
	defer html.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"runs": "not a list"}`))
	}))
	defer other.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()

	for _, c := range []struct {
		name, url string
		opts      ClientOptions
		want      string
	}{
		{"html", html.URL, ClientOptions{}, "is not flowrun's API"},
		{"another shape", other.URL, ClientOptions{}, "the answer is not the API's"},
		{"slow", slow.URL, ClientOptions{Timeout: 50 * time.Millisecond}, "no answer within 50ms"},
		{"untrusted certificate", tlsSrv.URL, ClientOptions{}, "certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := Dial(c.url, token, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			_, err = cl.Runs(context.Background(), RunsQuery{Limit: 1})
			var se *ServerError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.url) {
				t.Fatalf("Runs: %v, want a ServerError naming the server and %q", err, c.want)
			}
			if strings.Contains(err.Error(), token) {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
}

// TestDialRefuses: URLs that are no server's, and a token over plain
// http to a host that is not loopback.
func TestDialRefuses(t *testing.T) {
	for url, want := range map[string]string{
		"ftp://h":                     "must start with https://",
		"https://":                    "names no host",
		"https://u:p@h":               "holds a user name or password",
		"https://h/?x=1":              "query or fragment",
		"https://h:99999":             "port",
		"http://flowrun.example:8080": "a token is sent only over https",
	} {
		if _, err := Dial(url, "t", ClientOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Dial(%q): %v, want %q", url, err, want)
		}
	}
	if _, err := Dial("http://127.0.0.1:8080", "t", ClientOptions{}); err != nil {
		t.Errorf("a token over http to loopback refused: %v", err)
	}
}
