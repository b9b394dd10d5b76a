package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTP is a real HTTP client for a `flowrun serve` the script started
// in the background with --addr-file:
//
//	http [-addr FILE] [-token TOKEN] [-H 'Name: value']... [-sse N] METHOD PATH [BODY | @FILE]
//
// It waits (30s at most, a safety net) for FILE (default "addr") to hold
// the server's address, sends the request (with "Authorization: Bearer
// TOKEN" when -token is given; -token @FILE reads it from FILE) and prints the status code on the first
// line of stdout, then the body; the response headers go to stderr as
// Name: value lines. With -sse N it reads a text/event-stream until N
// events came or the stream ended, and prints the events as they came.
// It fails (or, negated, passes) on a status of 400 or more.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	addrFile, token, sse := "addr", "", -1
	var headers []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args) > 1 {
		switch args[0] {
		case "-addr":
			addrFile = args[1]
		case "-token":
			token = args[1]
			if strings.HasPrefix(token, "@") {
				token = strings.TrimSpace(ts.ReadFile(token[1:]))
			}
		case "-H":
			headers = append(headers, args[1])
		case "-sse":
			if _, err := fmt.Sscan(args[1], &sse); err != nil {
				ts.Fatalf("http -sse %q: %v", args[1], err)
			}
		default:
			ts.Fatalf("http: unknown flag %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: http [-addr FILE] [-token TOKEN] [-H 'Name: value']... [-sse N] METHOD PATH [BODY | @FILE]")
	}
	addr := waitAddr(ts, addrFile)
	var body io.Reader
	if len(args) == 3 {
		b := args[2]
		if strings.HasPrefix(b, "@") {
			b = ts.ReadFile(b[1:])
		}
		body = strings.NewReader(b)
	}
	scheme := "http"
	client := &http.Client{Timeout: 60 * time.Second}
	if strings.HasPrefix(addr, "https://") {
		scheme, addr = "https", strings.TrimPrefix(addr, "https://")
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // a test certificate
	}
	req, err := http.NewRequest(args[0], scheme+"://"+addr+args[1], body)
	ts.Check(err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := client.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	fmt.Fprintf(ts.Stdout(), "%d\n", resp.StatusCode)
	for _, k := range []string{"Content-Type", "Location", "Retry-After", "Www-Authenticate", "Allow"} {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(ts.Stderr(), "%s: %s\n", k, v)
		}
	}
	if sse >= 0 {
		readEvents(ts, resp.Body, sse)
	} else {
		b, err := io.ReadAll(resp.Body)
		ts.Check(err)
		ts.Stdout().Write(b)
	}
	if failed := resp.StatusCode >= 400; failed != neg {
		if neg {
			ts.Fatalf("http %s %s: status %d, want 400 or more", args[0], args[1], resp.StatusCode)
		}
		ts.Fatalf("http %s %s: status %d", args[0], args[1], resp.StatusCode)
	}
}

// readEvents copies an event stream to stdout until n events (blank-line
// terminated blocks with a data line) came or the stream ended.
func readEvents(ts *testscript.TestScript, r io.Reader, n int) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	seen, hasData := 0, false
	for seen < n && sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(ts.Stdout(), line)
		switch {
		case strings.HasPrefix(line, "data:"):
			hasData = true
		case line == "" && hasData:
			seen++
			hasData = false
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		ts.Fatalf("reading the event stream: %v", err)
	}
}

// waitAddr waits for a --addr-file to hold an address and returns it.
func waitAddr(ts *testscript.TestScript, file string) string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(ts.MkAbs(file))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			ts.Fatalf("http: %s did not get an address within 30s (did flowrun serve start?)", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
