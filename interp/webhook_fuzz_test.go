package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

const fuzzHookWorkflow = `workflow "fz" {
  version = "1.0.0"
  input "ref" { type = string }
  input "payload" { type = any }
  secret "k" { env = "K" }
  webhook "w" {
    secret = secret.k
    inputs = { ref = "{{ body.ref }}", payload = "{{ body }}" }
  }
  step "s" {
    set { r = "{{ input.ref }}" }
  }
}`

// FuzzWebhookBody: whatever the signed body, StartWebhook either refuses
// it with a request, inputs or key error and writes nothing, or stores a
// run whose inputs are JSON with a string ref and the body as the payload.
// Neither a refusal nor the inputs show the webhook's secret.
// Its seeds are in testdata/fuzz/FuzzWebhookBody and below.
func FuzzWebhookBody(f *testing.F) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "flowrun.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	e := New(st, Options{Clock: clock.NewFake(t0), Owner: store.Owner{Host: "fuzz", PID: 1, Worker: "f"},
		Getenv: func(k string) string { return map[string]string{"K": "fuzz-key"}[k] }, ParkWait: -1})
	m, diags := lang.LoadFile("fz.hcl", []byte(fuzzHookWorkflow))
	if diags.HasErrors() {
		f.Fatal(diags.Error())
	}
	if _, err := e.StoreGraph(ctx, m.Workflows[0].Graph); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"ref":"main"}`, `{"ref":1}`, `{"ref":"a","x":[1,{"y":null}]}`, `[1,2]`, `null`, ``, `{"ref":"\u00e9\ud83d\ude00"}`, `{"ref":`, `{"ref":"a"} {}`} {
		f.Add([]byte(s))
	}
	count := func(t *testing.T) int {
		runs, err := st.RunList(ctx, store.RunListParams{Workflow: "fz"})
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		h := http.Header{}
		h.Set("X-Hub-Signature-256", Sign([]byte("fuzz-key"), body))
		before := count(t)
		res, err := e.StartWebhook(ctx, WebhookRequest{Workflow: "fz", Webhook: "w", Body: body, Header: h})
		if err != nil {
			var re *WebhookRequestError
			var we *WebhookInputsError
			var ie *InputError
			var ke *KeyError
			if !errors.As(err, &re) && !errors.As(err, &we) && !errors.As(err, &ie) && !errors.As(err, &ke) {
				t.Fatalf("body %q: unexpected error %T: %v", body, err, err)
			}
			if strings.Contains(err.Error(), "fuzz-key") && !bytes.Contains(body, []byte("fuzz-key")) {
				t.Fatalf("body %q: the refusal shows the webhook's secret: %v", body, err)
			}
			if n := count(t); n != before {
				t.Fatalf("body %q: refused (%v) but the runs went from %d to %d", body, err, before, n)
			}
			return
		}
		if bytes.Contains(res.Run.Inputs, []byte("fuzz-key")) && !bytes.Contains(body, []byte("fuzz-key")) {
			t.Fatalf("body %q: the run's inputs %s hold the webhook's secret", body, res.Run.Inputs)
		}
		var in map[string]any
		if err := json.Unmarshal(res.Run.Inputs, &in); err != nil {
			t.Fatalf("body %q: the run's inputs %s are not a JSON object: %v", body, res.Run.Inputs, err)
		}
		if _, ok := in["ref"].(string); !ok {
			t.Fatalf("body %q: input ref = %#v, want a string", body, in["ref"])
		}
		var want any
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("body %q started a run but is not JSON", body)
		}
		if got, _ := json.Marshal(in["payload"]); string(got) != string(mustJSON(want)) {
			t.Fatalf("body %q: payload %s, want %s", body, got, mustJSON(want))
		}
	})
}
