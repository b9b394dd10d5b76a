package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// leakForms are the texts a secret must never be stored as: itself and
// the ways Go and JSON encode it.
func leakForms(secret string) []string {
	q := strconv.Quote(secret)
	j, _ := json.Marshal(secret)
	return []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		(&url.URL{Path: secret}).EscapedPath(),
		q[1 : len(q)-1],
		string(j[1 : len(j)-1]),
	}
}

// storedText is everything the store holds about a run: the database
// file and its write-ahead log (raw bytes), and the run, its steps, every
// attempt and every event as read back.
func storedText(b *bundle, runID string) string {
	b.t.Helper()
	var sb strings.Builder
	for _, p := range []string{b.st.Path(), b.st.Path() + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			b.t.Fatalf("read %s: %v", p, err)
		}
		sb.Write(data)
	}
	v := b.show(runID)
	view, _ := json.Marshal(v)
	sb.Write(view)
	for key := range v.Steps {
		as, _ := json.Marshal(b.attempts(runID, key))
		sb.Write(as)
	}
	evs, _ := json.Marshal(b.events(runID))
	sb.Write(evs)
	return sb.String()
}

// wantNoLeak fails when the stored run holds the secret, one of its
// encodings, or any of the fragments.
func wantNoLeak(t *testing.T, b *bundle, runID, secret string, fragments ...string) {
	t.Helper()
	text := storedText(b, runID)
	for _, f := range append(leakForms(secret), fragments...) {
		if i := strings.Index(text, f); i >= 0 {
			lo, hi := max(0, i-120), min(len(text), i+len(f)+60)
			t.Errorf("the store holds %q (from the secret %q): ...%q...", f, secret, text[lo:hi])
		}
	}
}

// stepMessage is the stored error message of a step.
func stepMessage(t *testing.T, b *bundle, runID, step string) string {
	t.Helper()
	var se stepError
	if err := json.Unmarshal(b.show(runID).Steps[step].Error, &se); err != nil {
		t.Fatalf("step %s error: %v", step, err)
	}
	return se.Message
}

// refusedURL is an address nothing listens on: a request to it fails
// with "connection refused".
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestHTTPSecretInURLIsRedacted: a secret with a space, a quote, a
// backslash and a percent sign in the path or the query of a request that
// fails (connection refused) is stored as *** only, never as Go's quoted or
// percent-encoded rendering of the URL (*url.Error).
func TestHTTPSecretInURLIsRedacted(t *testing.T) {
	base := refusedURL(t)
	for _, tc := range []struct {
		name, secret, method, url string
		want                      string // the step's error message
	}{
		{"path", `Zk9 pass"wrd\x%41y`, "GET", `{{ input.base }}/api/{{ secrets.tok }}/x`,
			"GET " + base + "/api/***/x failed: dial tcp "},
		{"query", `Zk9 pass"wrd\x%y`, "POST", `{{ input.base }}/api?t={{ secrets.tok }}`,
			"POST " + base + "/api?t=*** failed: dial tcp "},
		{"fragment", `Zk9 pass"wrd\x%41!`, "GET", `{{ input.base }}/api#{{ secrets.tok }}`,
			"GET " + base + "/api#*** failed: dial tcp "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			b.env["MY_TOKEN"] = tc.secret
			run := b.run(`
workflow "s" {
  version = "1.0.0"
  input "base" { type = string }
  secret "tok" { env = "MY_TOKEN" }
  step "h" {
    http {
      method = "`+tc.method+`"
      url    = "`+tc.url+`"
      body   = "x"
    }
  }
}`, map[string]any{"base": base})
			wantStatus(t, run, store.RunFailed)
			if msg := stepMessage(t, b, run.ID, "h"); !strings.HasPrefix(msg, tc.want) || !strings.Contains(msg, "connection refused") {
				t.Errorf("message = %q, want it to start %q and say the connection was refused", msg, tc.want)
			}
			wantNoLeak(t, b, run.ID, tc.secret, "Zk9", "pass")
		})
	}
}

// TestHTTPUnparsableURLWithSecret: a URL that does not parse because of
// the secret in it is refused without url.Parse's text, which quotes the
// URL and the part of it that is wrong (here the port); a value that
// cannot be in the host is refused naming its expression, never its
// value; a URL without a secret keeps url.Parse's full explanation.
func TestHTTPUnparsableURLWithSecret(t *testing.T) {
	for _, tc := range []struct {
		name, secret, url, want string
		frags                   []string // parts of the secret url.Parse would quote
	}{
		{"port", `q"uo'te`, `http://127.0.0.1:{{ secrets.tok }}/x`,
			`the request could not be built: parse "http://127.0.0.1:***/x": invalid port after host`, []string{`q\"uo`, `q"uo`}},
		{"host", `Zk9{h"st`, `http://{{ secrets.tok }}.example/x`,
			`the request could not be built: parse "http://***.example/x": invalid character in host name`, []string{"Zk9", `h\"st`}},
		{"host structure", `Zk9 h"st/x`, `http://{{ secrets.tok }}.example/x`,
			`the request could not be built: the value of {{ secrets.tok }} cannot be in the url's host: it holds a space, a control character or one of / ? # @ \ % (a value in the host or port is placed as it is, so it must not change where the host ends or be decoded into another host)`, []string{"Zk9", `h\"st`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			b.env["MY_TOKEN"] = tc.secret
			run := b.run(`
workflow "s" {
  version = "1.0.0"
  secret "tok" { env = "MY_TOKEN" }
  step "h" {
    http { url = "`+tc.url+`" }
  }
}`, nil)
			wantStatus(t, run, store.RunFailed)
			if msg := stepMessage(t, b, run.ID, "h"); msg != tc.want {
				t.Errorf("message = %q, want %q", msg, tc.want)
			}
			wantNoLeak(t, b, run.ID, tc.secret, tc.frags...)
		})
	}

	// Without a secret, the message is url.Parse's.
	b := setup(t)
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  step "h" {
    http { url = "http://127.0.0.1:{{ 'nope' }}/x" }
  }
}`, nil)
	want := `the request could not be built: parse "http://127.0.0.1:nope/x": invalid port ":nope" after host`
	if msg := stepMessage(t, b, run.ID, "h"); msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
}

// noSuchHost is a transport that resolves nothing: its dial fails as Go's
// resolver does for an unknown name, naming the host it was given (for a
// non-ASCII host, its IDNA form) and it records the addresses dialed.
type noSuchHost struct {
	mu    sync.Mutex
	addrs []string
}

func (n *noSuchHost) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			n.mu.Lock()
			n.addrs = append(n.addrs, addr)
			n.mu.Unlock()
			host, _, _ := net.SplitHostPort(addr)
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: &net.DNSError{Name: host, Server: "127.0.0.53:53", Err: "no such host", IsNotFound: true}}
		},
	}}
}

// TestHTTPSecretInHost: a secret in the host name of a request whose host
// cannot be resolved: the resolver's error names the host, as the request
// sent it (a non-ASCII name in its punycode form, which no redaction of
// the value finds), so only the kind of failure is stored.
func TestHTTPSecretInHost(t *testing.T) {
	for _, secret := range []string{"Zk9ärgerlich", `Zk9"p(a)ss`} {
		t.Run(secret, func(t *testing.T) {
			tr := &noSuchHost{}
			b := setup(t, func(o *Options) { o.HTTPClient = tr.client() })
			b.env["MY_TOKEN"] = secret
			run := b.run(`
workflow "s" {
  version = "1.0.0"
  secret "tok" { env = "MY_TOKEN" }
  step "h" {
    http { url = "http://{{ secrets.tok }}.example/x" }
  }
}`, nil)
			wantStatus(t, run, store.RunFailed)
			want := "GET http://***.example/x failed: looking up the host failed: no such host"
			if msg := stepMessage(t, b, run.ID, "h"); msg != want {
				t.Errorf("message = %q, want %q", msg, want)
			}
			tr.mu.Lock()
			dialed := append([]string(nil), tr.addrs...)
			tr.mu.Unlock()
			if len(dialed) == 0 {
				t.Fatal("the request was never dialed")
			}
			var hosts []string
			for _, a := range dialed {
				h, _, _ := net.SplitHostPort(a)
				hosts = append(hosts, h, strings.TrimSuffix(h, ".example"))
			}
			wantNoLeak(t, b, run.ID, secret, append(hosts, "Zk9", "zk9")...)
		})
	}
}

// TestHTTPSecretInHostRefused: a secret that is the host (here the
// address itself) of a refused connection is not named by the dialer's
// error either.
func TestHTTPSecretInHostRefused(t *testing.T) {
	base := refusedURL(t)
	hostport := strings.TrimPrefix(base, "http://")
	b := setup(t)
	b.env["MY_TOKEN"] = hostport
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  secret "tok" { env = "MY_TOKEN" }
  step "h" {
    http { url = "http://{{ secrets.tok }}/x" }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	want := "GET http://***/x failed: dial tcp: connect: connection refused"
	if msg := stepMessage(t, b, run.ID, "h"); msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	wantNoLeak(t, b, run.ID, hostport)
}

const straddler = "TOPSECRETVALUE123"

// TestExecSecretStraddlingOutputLimit: a secret that the output_bytes cut
// would split is dropped whole, in stdout and stderr, and the last line of
// stderr quoted in the error (cut at 300 bytes) does not keep part of one.
func TestExecSecretStraddlingOutputLimit(t *testing.T) {
	b := setup(t)
	b.env["MY_TOKEN"] = straddler
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  limits { output_bytes = 1024 }
  secret "tok" { env = "MY_TOKEN" }
  step "out" {
    exec {
      command = ["sh", "-c", "head -c 1016 /dev/zero | tr '\\0' a; printf %s \"$T\"; head -c 2000 /dev/zero | tr '\\0' b; head -c 1020 /dev/zero | tr '\\0' c >&2; printf %s \"$T\" >&2"]
      env     = { T = "{{ secrets.tok }}" }
    }
  }
  step "tail" {
    depends_on = [step.out]
    exec {
      command = ["sh", "-c", "head -c 290 /dev/zero | tr '\\0' d >&2; printf '%s%s\\n' \"$T\" tail >&2; exit 1"]
      env     = { T = "{{ secrets.tok }}" }
    }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	v := b.show(run.ID)
	wantJSON(t, "out", v.Steps["out"].Output, fmt.Sprintf(`{"exit_code": 0, "json": null,
		"stdout": %q, "stderr": %q}`,
		strings.Repeat("a", 1016)+"\n[flowrun: truncated 2017 bytes]",
		strings.Repeat("c", 1020)+"\n[flowrun: truncated 17 bytes]"))
	if msg, want := stepMessage(t, b, run.ID, "tail"), `command "sh" exited with status 1: `+strings.Repeat("d", 290)+"***tail"; msg != want {
		t.Errorf("tail message = %q, want %q", msg, want)
	}
	wantNoLeak(t, b, run.ID, straddler, "TOPS", "OPSE", "VALUE")
}

// TestHTTPBodySecretStraddlingOutputLimit: an http response body over the
// limit fails the step (output_limit) instead of being kept in part, and
// nothing of a secret that straddles the limit is stored.
func TestHTTPBodySecretStraddlingOutputLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Repeat("a", 1016)+straddler+strings.Repeat("b", 2000))
	}))
	defer srv.Close()
	b := setup(t)
	b.env["MY_TOKEN"] = straddler
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  limits { output_bytes = 1024 }
  input "base" { type = string }
  secret "tok" { env = "MY_TOKEN" }
  step "h" {
    http {
      url     = "{{ input.base }}/x"
      headers = { Authorization = "Bearer {{ secrets.tok }}" }
    }
  }
}`, map[string]any{"base": srv.URL})
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "output_limit" {
		t.Errorf("run error = %s, want kind output_limit", run.Error)
	}
	wantNoLeak(t, b, run.ID, straddler, "TOPS", "OPSE", "VALUE")
}

// TestRedactorEncodedForms: the redactor replaces a secret's URL-escaped,
// Go-quoted and JSON-escaped forms, as well as the secret.
func TestRedactorEncodedForms(t *testing.T) {
	secret := `Zk9 p%s"w\d/ü;<&>`
	r := newRedactor(map[string]string{"tok": secret, "empty": ""})
	for _, f := range leakForms(secret) {
		if got := r.text("<" + f + ">"); got != "<***>" {
			t.Errorf("text(%q) = %q, want <***>", f, got)
		}
	}
	j, _ := json.Marshal(map[string]any{"k": secret})
	if got := r.text(string(j)); got != `{"k":"***"}` {
		t.Errorf("text(%s) = %q", j, got)
	}
	if got := r.text(fmt.Sprintf("%q", "x"+secret)); got != `"x***"` {
		t.Errorf("text(%%q) = %q", got)
	}
	if got := r.text("nothing secret: Zk9"); got != "nothing secret: Zk9" {
		t.Errorf("text changed %q", got)
	}
	// A plain secret has one form.
	if p := newRedactor(map[string]string{"a": "plain123"}); len(p.forms) != 1 || p.lookahead() != 7 {
		t.Errorf("forms of a plain secret = %q", p.forms)
	}
	var none *redactor
	if none.text("x") != "x" || none.lookahead() != 0 || none.safeCut([]byte("abc"), 2) != 2 {
		t.Error("a nil redactor changes text")
	}
}

// TestCapWriterCutsBeforeSecret: the cut moves to the start of a secret
// that straddles it, also one of overlapping occurrences, and only then.
func TestCapWriterCutsBeforeSecret(t *testing.T) {
	r := newRedactor(map[string]string{"a": "SECRET", "b": "abab"})
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"0123456SECRET", "0123456\n[flowrun: truncated 6 bytes]"},
		{"01234SECRETxyz", "01234\n[flowrun: truncated 9 bytes]"},
		{"0123SECRETxyz", "0123SECRET\n[flowrun: truncated 3 bytes]"}, // ends at the limit: kept whole, redacted later
		{"012345678SECR", "012345678S\n[flowrun: truncated 3 bytes]"}, // never completed: not a secret
		{"0123SECRET", "0123SECRET"},                                  // within the limit
		{"SECRETabcdefgh", "SECRETabcd\n[flowrun: truncated 4 bytes]"},
		{"0123ababababx", "0123\n[flowrun: truncated 9 bytes]"}, // overlapping occurrences
	} {
		w := &capWriter{limit: 10, red: r}
		for i := range len(tc.in) { // byte by byte, as a slow pipe
			w.Write([]byte{tc.in[i]})
		}
		if got := w.String(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
