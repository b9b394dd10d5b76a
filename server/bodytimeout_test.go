package server

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// TestBodyTimeout: a client that sends its headers and part of its body,
// then stalls, is answered 408 once BodyTimeout passed and its connection
// is let go; before, it held the connection as long as it liked.
func TestBodyTimeout(t *testing.T) {
	a := newAPI(t, func(o *Options) {
		o.Clock = clock.Real{} // the deadline is the connection's, on the real clock
		o.BodyTimeout = 200 * time.Millisecond
		o.NoAuth = true
	})
	c, err := net.Dial("tcp", strings.TrimPrefix(a.hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /v1/workflows/w/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"inputs\"")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a safety net, not a timing assumption
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a stalled body was answered %d, want 408", resp.StatusCode)
	}
}
