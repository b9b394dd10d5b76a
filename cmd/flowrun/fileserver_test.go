package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFileServer starts an HTTP server for the rest of the script and sets
// an environment variable to its base URL. GET /NAME answers with the
// script's file NAME as an application/json body (whatever it holds), so
// a script serves a body too large or too deep to write inline:
//
//	fileserver SRV
func cmdFileServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fileserver VAR")
	}
	dir := ts.MkAbs(".")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(dir + "/" + path.Base(r.URL.Path))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}
