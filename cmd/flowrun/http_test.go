package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// apiRequest is one request of the http script command and of the
// apiclient program.
type apiRequest struct {
	addr    string // HOST:PORT, or https://HOST:PORT
	token   string
	headers []string // "Name: value"
	sse     int      // read an event stream until this many events (-1: no)
	touch   string   // a file to create once the answer's headers came
	until   *regexp.Regexp
	method  string
	path    string
	body    *string
}

// do sends the request and prints the status code on the first line of
// stdout, then the body (or the events); the headers that matter go to
// stderr as Name: value lines.
func (q apiRequest) do(stdout, stderr io.Writer) (int, error) {
	var body io.Reader
	if q.body != nil {
		body = strings.NewReader(*q.body)
	}
	scheme, addr := "http", q.addr
	client := &http.Client{Timeout: 60 * time.Second}
	if a, ok := strings.CutPrefix(addr, "https://"); ok {
		scheme, addr = "https", a
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // a test certificate
	}
	req, err := http.NewRequest(q.method, scheme+"://"+addr+q.path, body)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if q.token != "" {
		req.Header.Set("Authorization", "Bearer "+q.token)
	}
	for _, h := range q.headers {
		k, v, _ := strings.Cut(h, ":")
		if strings.EqualFold(strings.TrimSpace(k), "Host") {
			req.Host = strings.TrimSpace(v) // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if q.touch != "" {
		if err := os.WriteFile(q.touch, nil, 0o644); err != nil {
			return 0, err
		}
	}
	fmt.Fprintf(stdout, "%d\n", resp.StatusCode)
	for _, k := range []string{"Content-Type", "Location", "Retry-After", "Www-Authenticate", "Allow"} {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(stderr, "%s: %s\n", k, v)
		}
	}
	if q.sse >= 0 {
		return resp.StatusCode, readEvents(resp.Body, q.sse, stdout)
	}
	_, err = io.Copy(stdout, resp.Body)
	return resp.StatusCode, err
}

// readEvents copies an event stream until n events (blank-line
// terminated blocks with a data line) came or the stream ended.
func readEvents(r io.Reader, n int, stdout io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	seen, hasData := 0, false
	for seen < n && sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(stdout, line)
		switch {
		case strings.HasPrefix(line, "data:"):
			hasData = true
		case line == "" && hasData:
			seen++
			hasData = false
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("reading the event stream: %w", err)
	}
	return nil
}

// readAddr waits (30s at most, a safety net against a server that did not
// start) for a --addr-file to hold an address.
func readAddr(file string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b)), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s did not get an address within 30s (did flowrun serve start?)", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parseRequest reads the flags and arguments shared by the http command
// and the apiclient program; files are resolved by abs.
func parseRequest(args []string, abs func(string) string) (apiRequest, error) {
	fs := flag.NewFlagSet("http", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addrFile := fs.String("addr", "addr", "the --addr-file of the server")
	token := fs.String("token", "", "the bearer token, or @FILE")
	sse := fs.Int("sse", -1, "read an event stream until this many events")
	touch := fs.String("touch", "", "create this file once the answer's headers came")
	useTLS := fs.Bool("tls", false, "speak HTTPS (trusting any certificate: a test's)")
	until := fs.String("until", "", "send the request again until the answer (status line and body) matches this regexp")
	var headers headerList
	fs.Var(&headers, "H", "a header, Name: value")
	if err := fs.Parse(args); err != nil {
		return apiRequest{}, err
	}
	rest := fs.Args()
	if len(rest) < 2 || len(rest) > 3 {
		return apiRequest{}, errors.New("usage: http [-addr FILE] [-token TOKEN|@FILE] [-H 'Name: value']... [-sse N] [-touch FILE] METHOD PATH [BODY | @FILE]")
	}
	q := apiRequest{headers: headers, sse: *sse, method: rest[0], path: rest[1], token: *token}
	if *until != "" {
		re, err := regexp.Compile(*until)
		if err != nil {
			return q, fmt.Errorf("-until: %w", err)
		}
		q.until = re
	}
	if *touch != "" {
		q.touch = abs(*touch)
	}
	if f, ok := strings.CutPrefix(q.token, "@"); ok {
		b, err := os.ReadFile(abs(f))
		if err != nil {
			return q, err
		}
		q.token = strings.TrimSpace(string(b))
	}
	if len(rest) == 3 {
		b := rest[2]
		if f, ok := strings.CutPrefix(b, "@"); ok {
			data, err := os.ReadFile(abs(f))
			if err != nil {
				return q, err
			}
			b = string(data)
		}
		q.body = &b
	}
	addr, err := readAddr(abs(*addrFile))
	q.addr = addr
	if *useTLS {
		q.addr = "https://" + addr
	}
	return q, err
}

type headerList []string

func (h *headerList) String() string     { return strings.Join(*h, ", ") }
func (h *headerList) Set(v string) error { *h = append(*h, v); return nil }

// cmdHTTP is a real HTTP client for a `flowrun serve` the script started
// in the background with --addr-file:
//
//	http [-addr FILE] [-token TOKEN|@FILE] [-H 'Name: value']... [-sse N] [-touch FILE] [-until REGEXP] METHOD PATH [BODY | @FILE]
//
// It waits for FILE (default "addr") to hold the server's address, sends
// the request (with "Authorization: Bearer TOKEN" when -token is given)
// and prints the status code on the first line of stdout, then the body;
// Content-Type, Location, Retry-After, WWW-Authenticate and Allow go to
// stderr. With -sse N it reads a text/event-stream until N events came or
// the stream ended. With -until REGEXP it sends the request again until
// the answer matches (30s at most). It fails (or, negated, passes) on a
// status of 400 or more.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	q, err := parseRequest(args, ts.MkAbs)
	if err != nil {
		ts.Fatalf("http: %v", err)
	}
	var status int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var out, errOut strings.Builder
		status, err = q.do(&out, &errOut)
		ts.Check(err)
		if q.until == nil || q.until.MatchString(out.String()) {
			fmt.Fprint(ts.Stdout(), out.String())
			fmt.Fprint(ts.Stderr(), errOut.String())
			break
		}
		// A safety net against a run that never gets there, not a timing
		// assumption.
		if time.Now().After(deadline) {
			ts.Fatalf("http %s %s: the answer did not match %q within 30s; the last was:\n%s", q.method, q.path, q.until, out.String())
		}
	}
	if failed := status >= 400; failed != neg {
		ts.Fatalf("http %s %s: status %d", q.method, q.path, status)
	}
}

// apiClient is the http command as a program, for a request that runs in
// the background while the script does something else (`apiclient ...
// &name&`, then `wait name`): an event stream followed while another
// process signals the run, a request in flight while the server stops.
// It exits 0 whatever the status (the script checks stdout), 1 when the
// request could not be made.
func apiClient() {
	wd, _ := os.Getwd()
	abs := func(p string) string {
		if strings.HasPrefix(p, "/") {
			return p
		}
		return wd + "/" + p
	}
	q, err := parseRequest(os.Args[1:], abs)
	if err == nil {
		_, err = q.do(os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiclient:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// cmdSlowClient is a client that never finishes its request headers:
//
//	slowclient [-addr FILE] WITHIN
//
// It connects, sends a request line and one header, and then nothing; the
// server must close the connection (its --read-header-timeout) within
// WITHIN (a duration), or the command fails.
func cmdSlowClient(ts *testscript.TestScript, neg bool, args []string) {
	addrFile := "addr"
	if len(args) == 3 && args[0] == "-addr" {
		addrFile, args = args[1], args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: slowclient [-addr FILE] WITHIN")
	}
	within, err := time.ParseDuration(args[0])
	ts.Check(err)
	addr, err := readAddr(ts.MkAbs(addrFile))
	ts.Check(err)
	conn, err := net.Dial("tcp", addr)
	ts.Check(err)
	defer conn.Close()
	start := time.Now()
	_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: flowrun\r\n")
	ts.Check(err)
	ts.Check(conn.SetReadDeadline(start.Add(within)))
	b, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		ts.Fatalf("slowclient: the server kept the connection open for %s without the headers", within)
	}
	fmt.Fprintf(ts.Stdout(), "closed by the server after the headers did not come; it answered %q\n", firstLine(string(b)))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}

// cmdGenCert writes a self-signed certificate for 127.0.0.1 and its key,
// PEM, for a server started with --tls-cert and --tls-key:
//
//	gencert CERT KEY
func cmdGenCert(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gencert CERT KEY")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "flowrun test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	ts.Check(err)
	kb, err := x509.MarshalECPrivateKey(key)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
}

// cmdAuthTable checks every route of the OpenAPI document a running
// server serves (/v1/openapi.json) against its x-scope, through the
// server:
//
//	authtable [-addr FILE] READ-TOKEN WRITE-TOKEN DEPLOY-TOKEN ADMIN-TOKEN
//
// (each token may be @FILE). A route with a scope must answer 401 without
// a token, 403 with a token of the scope below it, and neither with its
// own; a route without security must answer neither without a token. It
// prints one line per route: METHOD PATH SCOPE and the statuses, and
// fails on the first route that does not hold.
func cmdAuthTable(ts *testscript.TestScript, neg bool, args []string) {
	addrFile := "addr"
	if len(args) > 2 && args[0] == "-addr" {
		addrFile, args = args[1], args[2:]
	}
	if neg || len(args) != 4 {
		ts.Fatalf("usage: authtable [-addr FILE] READ-TOKEN WRITE-TOKEN DEPLOY-TOKEN ADMIN-TOKEN")
	}
	tokens := map[string]string{}
	for i, scope := range []string{"read", "write", "deploy", "admin"} {
		t := args[i]
		if f, ok := strings.CutPrefix(t, "@"); ok {
			t = strings.TrimSpace(ts.ReadFile(f))
		}
		tokens[scope] = t
	}
	addr, err := readAddr(ts.MkAbs(addrFile))
	ts.Check(err)
	resp, err := http.Get("http://" + addr + "/v1/openapi.json")
	ts.Check(err)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	ts.Check(err)
	below := map[string]string{"write": "read", "deploy": "write", "admin": "deploy"}
	var lines []string
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Scope    string             `json:"x-scope"`
				Security *[]json.RawMessage `json:"security"`
			}
			ts.Check(json.Unmarshal(raw, &op))
			url := strings.NewReplacer("{workflow}", "nope", "{id}", "nope", "{name}", "nope").Replace(path)
			send := func(token string) int {
				var body io.Reader
				if method == "post" {
					body = strings.NewReader("{}")
				}
				req, err := http.NewRequest(strings.ToUpper(method), "http://"+addr+url, body)
				ts.Check(err)
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				ts.Check(err)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			refused := func(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }
			line := strings.ToUpper(method) + " " + path
			switch {
			case op.Security != nil && len(*op.Security) == 0:
				code := send("")
				if refused(code) {
					ts.Fatalf("%s needs no token, but answered %d without one", line, code)
				}
				line += fmt.Sprintf(" open: %d", code)
			case tokens[op.Scope] == "":
				ts.Fatalf("%s needs a token but has no x-scope of read, write, deploy or admin (got %q)", line, op.Scope)
			default:
				none := send("")
				if none != http.StatusUnauthorized {
					ts.Fatalf("%s answered %d without a token, want 401", line, none)
				}
				line += fmt.Sprintf(" %s: %d", op.Scope, none)
				if low, ok := below[op.Scope]; ok {
					code := send(tokens[low])
					if code != http.StatusForbidden {
						ts.Fatalf("%s answered %d to a %s token, want 403", line, code, low)
					}
					line += fmt.Sprintf(" %d", code)
				}
				code := send(tokens[op.Scope])
				if refused(code) {
					ts.Fatalf("%s refused a %s token: %d", line, op.Scope, code)
				}
				line += fmt.Sprintf(" %d", code)
			}
			lines = append(lines, line)
		}
	}
	sort.Strings(lines)
	fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
}

// cmdFlood opens N connections to a flowrun serve from 127.0.0.1 that
// send a request line and one header and then nothing (as slow clients
// do), keeps them open until the script ends, and checks that the server
// still answers: GET /healthz from another client address (127.0.0.2)
// within a second, and a further connection from the flooding address is
// answered (refused with 503, or served), not left hanging:
//
//	flood [-addr FILE] N
func cmdFlood(ts *testscript.TestScript, neg bool, args []string) {
	addrFile := "addr"
	if len(args) == 3 && args[0] == "-addr" {
		addrFile, args = args[1], args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: flood [-addr FILE] N")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	addr, err := readAddr(ts.MkAbs(addrFile))
	ts.Check(err)
	from := func(ip string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		return d.Dial("tcp", addr)
	}
	opened := 0
	for range n {
		c, err := from("127.0.0.1")
		if err != nil {
			break // the kernel's queue is full: the flood is as big as it gets
		}
		ts.Defer(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: flowrun\r\n"); err == nil {
			opened++
		}
	}
	probe := func(ip string) string {
		c, err := from(ip)
		if err != nil {
			return "no connection: " + err.Error()
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); err != nil {
			return "no answer: " + err.Error()
		}
		b, err := io.ReadAll(c)
		if len(b) == 0 {
			return fmt.Sprintf("no answer within a second (%v)", err)
		}
		return firstLine(string(b))
	}
	other := probe("127.0.0.2")
	same := probe("127.0.0.1")
	fmt.Fprintf(ts.Stdout(), "%d slow connections open\nanother client: %s\nthe flooding client: %s\n", opened, other, same)
}

// cmdRace sends one request N times at once (the arguments of the http
// command after N; %i in them is the request's number, 1 to N, and %2 is
// 1 or 2 in turn, to split the requests between two servers) and prints
// how the answers went: the count of each status, and the distinct run
// ids they named (the first "run_id" of each body):
//
//	race N [http flags] METHOD PATH [BODY]
func cmdRace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: race N [http flags] METHOD PATH [BODY] (%%i in an argument is the request's number from 1, %%2 is 1 or 2 in turn: -addr addr%%2 splits the requests between two servers)")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	reqs := make([]apiRequest, n)
	for i := range n {
		numbered := make([]string, len(args)-1)
		for j, a := range args[1:] {
			numbered[j] = strings.NewReplacer("%i", strconv.Itoa(i+1), "%2", strconv.Itoa(i%2+1)).Replace(a)
		}
		if reqs[i], err = parseRequest(numbered, ts.MkAbs); err != nil {
			ts.Fatalf("race: %v", err)
		}
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() { // joined below
			defer wg.Done()
			<-start
			var out, errOut strings.Builder
			st, err := reqs[i].do(&out, &errOut)
			answers[i] = answer{st, out.String(), err}
		}()
	}
	close(start)
	wg.Wait()
	statuses := map[int]int{}
	runs := map[string]bool{}
	runID := regexp.MustCompile(`"run_id":"([0-9A-Z]{26})"`)
	for _, a := range answers {
		ts.Check(a.err)
		statuses[a.status]++
		if m := runID.FindStringSubmatch(a.body); m != nil {
			runs[m[1]] = true
		}
	}
	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		fmt.Fprintf(ts.Stdout(), "status %d: %d\n", c, statuses[c])
	}
	fmt.Fprintf(ts.Stdout(), "runs named: %d\n", len(runs))
}
