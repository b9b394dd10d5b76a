package interp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRunHTTP: one http action's request (runHTTP) against its floor,
// the same GET made with the client alone and its body read.
func BenchmarkRunHTTP(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	client := &http.Client{}
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := client.Get(srv.URL + "/x")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("runHTTP", func(b *testing.B) {
		b.ReportAllocs()
		red := newRedactor(nil)
		for b.Loop() {
			c := &httpCall{method: "GET", url: srv.URL + "/x", headers: map[string]string{}, red: red}
			if _, se := runHTTP(context.Background(), client, c, 1<<20); se != nil {
				b.Fatal(se.Message)
			}
		}
	})
}
