package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// FuzzBatchRequest: whatever the body of a batch start, the answer is a
// batch (200 or 201, as many runs as items, the created ones stored) or a
// problem of the client's (4xx) that wrote nothing; never a 5xx. Seeds
// are below and in testdata/fuzz/FuzzBatchRequest.
func FuzzBatchRequest(f *testing.F) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "flowrun.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	eng := interp.New(st, interp.Options{Clock: clock.NewFake(t0), Owner: store.Owner{Host: "fuzz", PID: 1, Worker: "f"}, ParkWait: -1})
	m, diags := lang.LoadFile("b.hcl", []byte(`workflow "b" {
  version = "1.0.0"
  input "id" { type = string }
  input "n" {
    type    = number
    default = 0
  }
  input "tags" {
    type    = list(string)
    default = []
  }
  key = "input.id"
  step "s" {
    set { id = "{{ input.id }}" }
  }
}`))
	if diags.HasErrors() {
		f.Fatal(diags.Error())
	}
	if _, err := eng.StoreGraph(ctx, m.Workflows[0].Graph); err != nil {
		f.Fatal(err)
	}
	srv := New(Options{Engine: eng, Clock: clock.NewFake(t0), NoAuth: true})
	for _, s := range []string{
		`{"runs":[{"inputs":{"id":"a"}},{"inputs":{"id":"b","n":2,"tags":["x"]}}]}`,
		`{"runs":[{"inputs":{"id":"a"}},{"inputs":{"id":"a"}}]}`,
		`{"runs":[{"inputs":{"id":1}}]}`,
		`{"runs":[{"inputs":{"id":"c","tags":"x"}}]}`,
		`{"runs":[{"input":{}}]}`,
		`{"runs":[null,[],"x",1]}`,
		`{"version":"2","runs":[{"inputs":{"id":"d"}}]}`,
		`{"new":true,"runs":[{"inputs":{"id":"a"}},{"inputs":{"id":"a"}}]}`,
		`{"runs":[]}`, `[]`, ``, `{"runs":[{"inputs":{"id":"e"}}]} x`,
	} {
		f.Add([]byte(s))
	}
	count := func(t *testing.T) int {
		runs, err := st.RunList(ctx, store.RunListParams{})
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		before := count(t)
		req := httptest.NewRequest(http.MethodPost, "/v1/workflows/b/runs/batch", strings.NewReader(string(body)))
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		after := count(t)
		switch {
		case rec.Code >= 500:
			t.Fatalf("body %q: %d %s", body, rec.Code, rec.Body)
		case rec.Code >= 400:
			if after != before {
				t.Fatalf("body %q: refused (%d %s) but the runs went from %d to %d", body, rec.Code, rec.Body, before, after)
			}
			if rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("body %q: %d without problem+json", body, rec.Code)
			}
		default:
			var ans struct {
				Runs []struct {
					RunID   string `json:"run_id"`
					Created bool   `json:"created"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil || len(ans.Runs) == 0 {
				t.Fatalf("body %q: %d answer %s (%v)", body, rec.Code, rec.Body, err)
			}
			created := 0
			for _, r := range ans.Runs {
				if r.Created {
					created++
				}
				if _, err := st.RunGet(ctx, r.RunID); err != nil {
					t.Fatalf("body %q: answered run %s, not stored: %v", body, r.RunID, err)
				}
			}
			if after-before != created || (created > 0) != (rec.Code == http.StatusCreated) {
				t.Fatalf("body %q: %d with %d created, the runs went from %d to %d", body, rec.Code, created, before, after)
			}
		}
	})
}
