package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTPServe starts an HTTP server on 127.0.0.1 for the rest of the
// script (it is closed when the script ends):
//
//	httpserve NAME
//
// sets $NAME to its base URL (http://127.0.0.1:PORT) and $NAME_PORT to its
// port, and appends one line per request to $WORK/NAME.log: the method,
// the request URI exactly as it arrived, then any of the headers
// Authorization, Cookie, Proxy-Authorization, Referer, X-Api-Key and
// X-Plain as name=value; under /sink, also the Content-Type, every ce-
// header and the body (an event sink). It answers:
//
//	/redirect/PORT/REST     302 to http://127.0.0.1:PORT/REST
//	/redirect307/PORT/REST  307 to the same
//	/loop/N                 302 to /loop/N-1, and 200 at /loop/0
//	/stall                  200, a part of a JSON body, then nothing until
//	                        the client goes away (or 30s)
//	/endless                200, a body that never ends (until the client
//	                        goes away, or 30s)
//	/short                  200 with Content-Length 100 and 10 bytes
//	/num/N                  200 {"id": N}, N as written
//	/echoauth               200 {"auth": "the Authorization header"}
//	anything else           200 {"ok": true}
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpserve NAME")
	}
	name := args[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	logPath := ts.MkAbs(name + ".log")
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.RequestURI
		if strings.HasPrefix(r.URL.Path, "/sink") {
			// An event sink: the Content-Type, the ce- headers and the
			// body on the line, so a script sees what was sent.
			var ce []string
			for k, vs := range r.Header {
				if strings.HasPrefix(strings.ToLower(k), "ce-") {
					ce = append(ce, strings.ToLower(k)+"="+vs[0])
				}
			}
			sort.Strings(ce)
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			line += " content-type=" + r.Header.Get("Content-Type") + " " + strings.Join(ce, " ") + " body=" + string(b)
		}
		var names []string
		for _, k := range []string{"Authorization", "Cookie", "Proxy-Authorization", "Referer", "X-Api-Key", "X-Plain"} {
			if v := r.Header.Get(k); v != "" {
				names = append(names, strings.ToLower(k)+"="+v)
			}
		}
		sort.Strings(names)
		if len(names) > 0 {
			line += " " + strings.Join(names, " ")
		}
		mu.Lock()
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, "/redirect/"), strings.HasPrefix(p, "/redirect307/"):
			kind, hop, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
			port, rest, _ := strings.Cut(hop, "/")
			code := http.StatusFound
			if kind == "redirect307" {
				code = http.StatusTemporaryRedirect
			}
			http.Redirect(w, r, "http://127.0.0.1:"+port+"/"+rest, code)
		case p == "/echoauth":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"auth": %q}`, r.Header.Get("Authorization"))
		case strings.HasPrefix(p, "/num/"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id": %s}`, strings.TrimPrefix(p, "/num/"))
		case p == "/stall":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"partial": tr`)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		case p == "/endless":
			chunk := []byte(strings.Repeat("x", 32<<10))
			deadline := time.Now().Add(30 * time.Second)
			for r.Context().Err() == nil && time.Now().Before(deadline) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case strings.HasPrefix(p, "/petstore/"):
			servePetstore(w, r)
		case p == "/short":
			w.Header().Set("Content-Length", "100")
			fmt.Fprint(w, `{"a": 1} `)
			w.(http.Flusher).Flush()
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
				}
			}
		case strings.HasPrefix(p, "/loop/"):
			n, err := strconv.Atoi(strings.TrimPrefix(p, "/loop/"))
			if err != nil || n < 0 {
				http.Error(w, "bad loop count", http.StatusBadRequest)
				return
			}
			if n > 0 {
				http.Redirect(w, r, "/loop/"+strconv.Itoa(n-1), http.StatusFound)
				return
			}
			fmt.Fprintln(w, `{"ok": true}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintln(w, `{"ok": true}`)
		}
	})
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	ts.Defer(func() {
		_ = srv.Close()
		<-done
	})
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ts.Setenv(name, "http://127.0.0.1:"+port)
	ts.Setenv(name+"_PORT", port)
}
