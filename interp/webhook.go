package interp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/store"
)

// This file starts runs from webhook requests (spec/language.md §9.2):
// the signature is checked with the secret's value, read from the
// environment as a run's secrets are and never stored or shown; a
// redelivery (the same delivery id, or the key of a run to continue)
// starts nothing and reports the run.

// DeliveryHeaders are the request headers that carry a delivery id, in
// the order they are looked for.
var DeliveryHeaders = []string{"X-Delivery-Id", "X-GitHub-Delivery", "X-Gitea-Delivery"}

// MaxDeliveryID is the longest delivery id accepted.
const MaxDeliveryID = 200

// WebhookRequest is one request to a webhook.
type WebhookRequest struct {
	Workflow string
	Webhook  string
	// Body is the raw request body: the signature is over these bytes.
	Body   []byte
	Header http.Header
}

// WebhookResult is what a webhook request did: started Run (Created), or
// found it, by its delivery id (Redelivery) or by its key.
type WebhookResult struct {
	Run        store.Run
	Created    bool
	Redelivery bool
}

// WebhookNotFoundError: the newest stored version of the workflow declares
// no webhook of that name.
type WebhookNotFoundError struct {
	Workflow, Version, Webhook string
	Known                      []string
}

func (e *WebhookNotFoundError) Error() string {
	its := "it declares no webhook"
	if len(e.Known) > 0 {
		its = "its webhooks are " + naming.QuoteList(e.Known)
	}
	return fmt.Sprintf("workflow %q version %s has no webhook %q; %s.%s", e.Workflow, e.Version, e.Webhook, its, naming.DidYouMean(e.Webhook, e.Known))
}

func (e *WebhookNotFoundError) Unwrap() error { return store.ErrNotFound }

// SignatureError: the request's signature is missing or wrong. It never
// holds the expected signature.
type SignatureError struct {
	Header string
	Reason string
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("webhook signature: %s; send the header %s: sha256=<hex HMAC-SHA256 of the body under the webhook's secret>", e.Reason, e.Header)
}

// WebhookSecretError: the secret a webhook is signed with is not set in
// this process's environment, so no request can be verified.
type WebhookSecretError struct {
	Workflow, Webhook, Secret, Env string
}

func (e *WebhookSecretError) Error() string {
	return fmt.Sprintf("webhook %q of workflow %q: its secret %q is not set: the server's environment has no %s", e.Webhook, e.Workflow, e.Secret, e.Env)
}

// WebhookRequestError: the request is signed but unusable: its body is
// not JSON, or its delivery id is too long.
type WebhookRequestError struct{ Problem string }

func (e *WebhookRequestError) Error() string { return "webhook request: " + e.Problem }

// WebhookInputsError: the webhook's inputs failed on this body (a field
// the body lacks, a type the template does not accept).
type WebhookInputsError struct {
	Workflow, Webhook string
	// Input is the input whose value failed, "" when the inputs as a
	// whole did (not an object).
	Input string
	Err   error
}

func (e *WebhookInputsError) Error() string {
	return fmt.Sprintf("webhook %q of workflow %q: its inputs failed on this request: %v", e.Webhook, e.Workflow, e.Err)
}

func (e *WebhookInputsError) Unwrap() error { return e.Err }

// StartWebhook verifies a webhook request and starts the run it asks for,
// of the newest stored version of the workflow. In order: the webhook must
// be declared (*WebhookNotFoundError), its secret set
// (*WebhookSecretError), the signature right (*SignatureError); a
// delivery id already recorded reports its run; the body must be JSON
// (*WebhookRequestError); the inputs evaluated over body and headers must
// pass as apply's do (*WebhookInputsError, *InputError), and the key too
// (*KeyError). A run with the key that is unfinished, or completed on the
// same MAJOR.MINOR, is reported and nothing starts. Any error writes
// nothing.
func (e *Engine) StartWebhook(ctx context.Context, req WebhookRequest) (WebhookResult, error) {
	v, l, err := e.startVersion(ctx, req.Workflow, "")
	if err != nil {
		return WebhookResult{}, err
	}
	wh := l.g.Webhook(req.Webhook)
	if wh == nil {
		known := make([]string, 0, len(l.g.Webhooks))
		for _, w := range l.g.Webhooks {
			known = append(known, w.Name)
		}
		return WebhookResult{}, &WebhookNotFoundError{Workflow: req.Workflow, Version: v.Version, Webhook: req.Webhook, Known: known}
	}
	if err := e.verifySignature(l.g, wh, req); err != nil {
		return WebhookResult{}, err
	}
	delivery, err := deliveryID(req.Header)
	if err != nil {
		return WebhookResult{}, err
	}
	if delivery != "" {
		if res, found, err := e.delivered(ctx, req, delivery); err != nil || found {
			return res, err
		}
	}
	body, err := webhookBody(req.Body)
	if err != nil {
		return WebhookResult{}, err
	}
	act := &expr.Activation{Body: body, Headers: webhookHeaders(req.Header)}
	given := map[string]any{}
	if wh.Inputs != nil {
		val, err := l.prog.EvalValue(ctx, wh.Inputs, act)
		if err != nil {
			in := ""
			if fe, ok := errors.AsType[*expr.FieldError](err); ok {
				in = fe.Key
			}
			return WebhookResult{}, &WebhookInputsError{Workflow: req.Workflow, Webhook: req.Webhook, Input: in, Err: err}
		}
		m, ok := val.(map[string]any)
		if !ok {
			return WebhookResult{}, &WebhookInputsError{Workflow: req.Workflow, Webhook: req.Webhook, Err: fmt.Errorf("the inputs are a %s, not an object", graph.JSONKind(val))}
		}
		given = m
	}
	inputs, err := checkInputs(l.g, given)
	if err != nil {
		return WebhookResult{}, err
	}
	var key string
	if wh.Key != nil {
		kv, err := l.prog.Eval(ctx, wh.Key, act)
		if err != nil {
			return WebhookResult{}, &KeyError{Workflow: req.Workflow, Err: err}
		}
		key = keyString(kv)
	} else if key, err = runKey(ctx, l.g, l.prog, inputs); err != nil {
		return WebhookResult{}, err
	}
	workDir, err := e.startDir(ctx, v, "")
	if err != nil {
		return WebhookResult{}, err
	}
	ins := e.insertParams(l, v, inputs, key)
	ins.WorkDir = workDir
	ins.Events[0].Data = mustJSON(map[string]any{"version": v.Version, "key": key, "webhook": req.Webhook})
	if delivery != "" {
		ins.Delivery = &store.Delivery{Webhook: req.Webhook, ID: delivery}
	}
	run, created, err := e.st.RunInsertKeyed(ctx, ins, func(old store.Run) (bool, error) {
		return continues(old, v), nil
	})
	if err == nil && !created {
		return WebhookResult{Run: run}, nil
	}
	if errors.Is(err, store.ErrDuplicateDelivery) {
		// another request with the same delivery id was first
		if res, found, err := e.delivered(ctx, req, delivery); err != nil || found {
			return res, err
		}
	}
	if err != nil {
		return WebhookResult{}, fmt.Errorf("start workflow %q from webhook %q: %w", req.Workflow, req.Webhook, err)
	}
	e.wakePools()
	return WebhookResult{Run: run, Created: true}, nil
}

// verifySignature checks the request's signature header against the
// HMAC-SHA256 of the body under the secret's value, in constant time.
func (e *Engine) verifySignature(g *graph.Graph, wh *graph.Webhook, req WebhookRequest) error {
	var env string
	for _, s := range g.Secrets {
		if s.Name == wh.Secret {
			env = s.Env
		}
	}
	key := e.opts.Getenv(env)
	if env == "" || key == "" {
		return &WebhookSecretError{Workflow: g.Workflow, Webhook: wh.Name, Secret: wh.Secret, Env: env}
	}
	got := req.Header.Values(wh.Signature)
	switch {
	case len(got) == 0:
		return &SignatureError{Header: wh.Signature, Reason: "the request has no " + wh.Signature + " header"}
	case len(got) > 1:
		return &SignatureError{Header: wh.Signature, Reason: "the request has several " + wh.Signature + " headers"}
	}
	sig, ok := strings.CutPrefix(strings.TrimSpace(got[0]), "sha256=")
	if !ok {
		return &SignatureError{Header: wh.Signature, Reason: "the header does not start with sha256="}
	}
	given, err := hex.DecodeString(sig)
	if err != nil || len(given) != sha256.Size {
		return &SignatureError{Header: wh.Signature, Reason: "the header does not hold 64 hex digits after sha256="}
	}
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(req.Body)
	if !hmac.Equal(mac.Sum(nil), given) {
		return &SignatureError{Header: wh.Signature, Reason: "the signature does not match the body"}
	}
	return nil
}

// Sign returns the signature header value of body under key, as a sender
// computes it: "sha256=" and the hex HMAC-SHA256.
func Sign(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// deliveryID returns the request's delivery id ("" when it has none).
func deliveryID(h http.Header) (string, error) {
	for _, name := range DeliveryHeaders {
		if id := strings.TrimSpace(h.Get(name)); id != "" {
			if len(id) > MaxDeliveryID {
				return "", &WebhookRequestError{Problem: fmt.Sprintf("the %s header holds %d characters, more than %d", name, len(id), MaxDeliveryID)}
			}
			return id, nil
		}
	}
	return "", nil
}

// delivered reports the run an earlier request with the delivery id
// started.
func (e *Engine) delivered(ctx context.Context, req WebhookRequest, delivery string) (WebhookResult, bool, error) {
	id, err := e.st.DeliveryRun(ctx, req.Workflow, req.Webhook, delivery)
	if errors.Is(err, store.ErrNotFound) {
		return WebhookResult{}, false, nil
	}
	if err != nil {
		return WebhookResult{}, false, fmt.Errorf("webhook %q of workflow %q: %w", req.Webhook, req.Workflow, err)
	}
	run, err := e.st.RunGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return WebhookResult{}, false, nil
	}
	if err != nil {
		return WebhookResult{}, false, fmt.Errorf("webhook %q of workflow %q: %w", req.Webhook, req.Workflow, err)
	}
	return WebhookResult{Run: run, Redelivery: true}, true, nil
}

// webhookBody parses a request body: UTF-8 JSON that decoding would not
// change (StrictJSON), nested at most graph.MaxValueDepth levels; an
// empty body is null.
func webhookBody(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if off := graph.JSONDepthOver(b, graph.MaxValueDepth); off >= 0 {
		return nil, &WebhookRequestError{Problem: fmt.Sprintf("the body nests deeper than %d levels at byte %d", graph.MaxValueDepth, off)}
	}
	if off := InvalidUTF8At(b); off >= 0 {
		return nil, &WebhookRequestError{Problem: fmt.Sprintf("the body is not UTF-8 (at byte %d); JSON text is UTF-8", off+1)}
	}
	if err := StrictJSON(b); err != nil {
		return nil, &WebhookRequestError{Problem: "the body is refused: " + err.Error()}
	}
	var v any
	if err := graph.UnmarshalJSON(b, &v); err != nil {
		return nil, &WebhookRequestError{Problem: "the body is not JSON: " + err.Error()}
	}
	return v, nil
}

// webhookHeaders is `headers` as a webhook's expressions see it: names in
// lower case, the values of a repeated header joined by ", ".
func webhookHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := strings.ToLower(n)
		v := strings.Join(h[n], ", ")
		if prev, ok := out[k]; ok {
			v = prev + ", " + v
		}
		out[k] = v
	}
	return out
}
