package main

import (
	"net/http"
	"net/http/httptest"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdEchoServer starts an HTTP server for the rest of the script and sets
// an environment variable to its base URL. It answers every request with
// status 200 and the request's X-Echo header as the body (JSON) and as its
// own X-Echo header, so a script controls what a server sends back without
// writing it in the script:
//
//	echoserver SRV
func cmdEchoServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: echoserver VAR")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := r.Header.Get("X-Echo")
		w.Header().Set("X-Echo", echo)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(echo))
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}
