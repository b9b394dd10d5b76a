package interp

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
)

const hookWorkflow = `workflow "hooked" {
  version = "1.0.0"
  input "ref" { type = string }
  input "count" {
    type    = number
    default = 0
  }
  input "event" {
    type    = string
    default = ""
  }
  secret "hook_key" { env = "HOOK_KEY" }
  webhook "push" {
    secret = secret.hook_key
    inputs = { ref = "{{ body.ref }}", count = "{{ has(body.count) ? body.count : 0 }}", event = "{{ 'x-github-event' in headers ? headers['x-github-event'] : '' }}" }
    key    = "body.after"
  }
  webhook "nokey" {
    secret    = secret.hook_key
    signature = "X-Signature"
    inputs    = { ref = "{{ body.ref }}" }
  }
  step "s" {
    exec { command = ["pwd"] }
  }
  output "dir" { value = "{{ steps.s.output.stdout.trim() }}" }
}`

const hookKey = "s3cr3t-hook-key"

func hookReq(name, body string, header ...string) WebhookRequest {
	h := http.Header{}
	sigHeader := "X-Hub-Signature-256"
	if name == "nokey" {
		sigHeader = "X-Signature"
	}
	h.Set(sigHeader, Sign([]byte(hookKey), []byte(body)))
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			h.Del(header[i])
			continue
		}
		h.Set(header[i], header[i+1])
	}
	return WebhookRequest{Workflow: "hooked", Webhook: name, Body: []byte(body), Header: h}
}

func (b *bundle) runCount() int {
	b.t.Helper()
	runs, err := b.st.RunList(b.ctx, store.RunListParams{})
	if err != nil {
		b.t.Fatal(err)
	}
	return len(runs)
}

// TestWebhookStart: a signed request starts a run of the newest version
// with the inputs its templates make of the body and headers, the key its
// key expression gives, in the directory recorded with the version.
func TestWebhookStart(t *testing.T) {
	b := setup(t)
	b.env["HOOK_KEY"] = hookKey
	dir := t.TempDir()
	b.compileAt(hookWorkflow, dir)
	res, err := b.e.StartWebhook(b.ctx, hookReq("push", `{"ref":"main","after":"abc","count":3}`, "X-GitHub-Event", "push"))
	if err != nil {
		t.Fatalf("StartWebhook: %v", err)
	}
	if !res.Created || res.Redelivery || res.Run.Key != "abc" || res.Run.WorkDir != dir {
		t.Fatalf("result = %+v, want a new run with key abc in %s", res, dir)
	}
	wantJSON(t, "inputs", res.Run.Inputs, `{"count":3,"event":"push","ref":"main"}`)
	done := b.drive(res.Run.ID)
	wantStatus(t, done, store.RunCompleted)
	wantJSON(t, "outputs", done.Outputs, `{"dir":"`+dir+`"}`)
	for _, ev := range b.events(res.Run.ID) {
		if strings.Contains(string(ev.Data), hookKey) {
			t.Errorf("event %s holds the secret: %s", ev.Kind, ev.Data)
		}
	}
}

// TestWebhookSignature: a missing, malformed or wrong signature, or a
// secret that is not set, is refused and writes nothing; the error never
// holds the secret or the expected signature.
func TestWebhookSignature(t *testing.T) {
	b := setup(t)
	b.env["HOOK_KEY"] = hookKey
	b.compile(hookWorkflow)
	body := `{"ref":"main","after":"abc"}`
	right := Sign([]byte(hookKey), []byte(body))
	for _, tc := range []struct {
		name   string
		req    WebhookRequest
		reason string
	}{
		{"missing", hookReq("push", body, "X-Hub-Signature-256", ""), "no X-Hub-Signature-256 header"},
		{"no prefix", hookReq("push", body, "X-Hub-Signature-256", strings.TrimPrefix(right, "sha256=")), "does not start with sha256="},
		{"not hex", hookReq("push", body, "X-Hub-Signature-256", "sha256=zz"), "64 hex digits"},
		{"other key", hookReq("push", body, "X-Hub-Signature-256", Sign([]byte("other"), []byte(body))), "does not match"},
		{"other body", hookReq("push", `{"ref":"evil","after":"abc"}`, "X-Hub-Signature-256", right), "does not match"},
		{"wrong header", hookReq("nokey", body, "X-Signature", "", "X-Hub-Signature-256", right), "no X-Signature header"},
	} {
		_, err := b.e.StartWebhook(b.ctx, tc.req)
		var se *SignatureError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: err = %v, want a SignatureError saying %q", tc.name, err, tc.reason)
		}
		if err != nil && (strings.Contains(err.Error(), hookKey) || strings.Contains(err.Error(), strings.TrimPrefix(right, "sha256="))) {
			t.Errorf("%s: the error shows the secret or the expected signature: %v", tc.name, err)
		}
	}
	// upper-case hex is the same signature
	if _, err := b.e.StartWebhook(b.ctx, hookReq("push", body, "X-Hub-Signature-256", "sha256="+strings.ToUpper(strings.TrimPrefix(right, "sha256=")))); err != nil {
		t.Errorf("upper-case hex: %v", err)
	}
	if n := b.runCount(); n != 1 {
		t.Errorf("%d runs stored, want only the one the good request started", n)
	}
	delete(b.env, "HOOK_KEY")
	_, err := b.e.StartWebhook(b.ctx, hookReq("push", `{"ref":"x","after":"def"}`))
	var wse *WebhookSecretError
	if !errors.As(err, &wse) || !strings.Contains(err.Error(), "HOOK_KEY") {
		t.Errorf("unset secret: %v, want a WebhookSecretError naming HOOK_KEY", err)
	}
}

// TestWebhookRedelivery: the same delivery id, or the key of an unfinished
// or completed run, starts nothing and reports the run; a failed run's key
// starts a new one; concurrent deliveries with one id start one run.
func TestWebhookRedelivery(t *testing.T) {
	b := setup(t)
	b.env["HOOK_KEY"] = hookKey
	b.compile(hookWorkflow)
	first, err := b.e.StartWebhook(b.ctx, hookReq("nokey", `{"ref":"a"}`, "X-GitHub-Delivery", "d-1"))
	if err != nil || !first.Created {
		t.Fatalf("first delivery: %+v, %v", first, err)
	}
	// same delivery id, another body (a sender may re-sign a redelivery)
	again, err := b.e.StartWebhook(b.ctx, hookReq("nokey", `{"ref":"b"}`, "X-GitHub-Delivery", "d-1"))
	if err != nil || again.Created || !again.Redelivery || again.Run.ID != first.Run.ID {
		t.Fatalf("redelivery = %+v, %v; want run %s reported", again, err, first.Run.ID)
	}
	// X-Delivery-Id is looked at first
	other, err := b.e.StartWebhook(b.ctx, hookReq("nokey", `{"ref":"c"}`, "X-Delivery-Id", "d-2", "X-GitHub-Delivery", "d-1"))
	if err != nil || !other.Created {
		t.Fatalf("delivery d-2 = %+v, %v; want a new run", other, err)
	}
	// same key (push's key is body.after) while the run is unfinished
	k1, err := b.e.StartWebhook(b.ctx, hookReq("push", `{"ref":"a","after":"k"}`))
	if err != nil || !k1.Created {
		t.Fatalf("keyed = %+v, %v", k1, err)
	}
	k2, err := b.e.StartWebhook(b.ctx, hookReq("push", `{"ref":"changed","after":"k"}`))
	if err != nil || k2.Created || k2.Redelivery || k2.Run.ID != k1.Run.ID {
		t.Fatalf("same key = %+v, %v; want run %s reported", k2, err, k1.Run.ID)
	}
	wantStatus(t, b.drive(k1.Run.ID), store.RunCompleted)
	k3, err := b.e.StartWebhook(b.ctx, hookReq("push", `{"ref":"a","after":"k"}`))
	if err != nil || k3.Created || k3.Run.ID != k1.Run.ID {
		t.Fatalf("key of a completed run = %+v, %v; want run %s reported", k3, err, k1.Run.ID)
	}
	if n := b.runCount(); n != 3 {
		t.Fatalf("%d runs, want 3", n)
	}

	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.e.StartWebhook(b.ctx, hookReq("nokey", `{"ref":"race"}`, "X-Delivery-Id", "race"))
			ids[i], errs[i] = r.Run.ID, err
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("concurrent delivery %d: run %s, %v; want one run for all", i, ids[i], errs[i])
		}
	}
	if n := b.runCount(); n != 4 {
		t.Fatalf("%d runs after concurrent deliveries of one id, want 4", n)
	}
}

// TestWebhookBadRequest: an unknown webhook, a body that is not JSON, a
// body the inputs cannot use, or inputs of the wrong type write nothing.
func TestWebhookBadRequest(t *testing.T) {
	b := setup(t)
	b.env["HOOK_KEY"] = hookKey
	b.compile(hookWorkflow)
	check := func(what string, req WebhookRequest, as any, want string) {
		t.Helper()
		_, err := b.e.StartWebhook(b.ctx, req)
		if err == nil || !errors.As(err, as) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want a %T saying %q", what, err, as, want)
		}
	}
	req := hookReq("push", `{}`)
	req.Webhook = "psuh"
	check("unknown webhook", req, new(*WebhookNotFoundError), `Did you mean "push"?`)
	check("not JSON", hookReq("push", `{"ref":`), new(*WebhookRequestError), "not JSON")
	check("too deep", hookReq("push", strings.Repeat("[", 1001)+strings.Repeat("]", 1001)), new(*WebhookRequestError), "deeper than 1000")
	check("long delivery id", hookReq("push", `{}`, "X-Delivery-Id", strings.Repeat("d", 201)), new(*WebhookRequestError), "more than 200")
	check("field missing", hookReq("push", `{"after":"k"}`), new(*WebhookInputsError), "ref")
	check("wrong type", hookReq("push", `{"ref":"a","after":"k","count":"three"}`), new(*InputError), `input "count"`)
	check("key fails", hookReq("push", `{"ref":"a"}`), new(*KeyError), "key")
	if n := b.runCount(); n != 0 {
		t.Errorf("%d runs stored, want none", n)
	}
	if _, err := b.e.StartWebhook(b.ctx, WebhookRequest{Workflow: "nope", Webhook: "push", Header: http.Header{}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown workflow: %v, want ErrNotFound", err)
	}
}
