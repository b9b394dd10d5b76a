package lang

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// TestWebhookBlock compiles webhook blocks into the graph: the secret
// resolved to its name, the signature header canonical (and defaulted),
// sorted by name, the inputs and key evaluated with body and headers
// bound, and the stored encoding round-trips through the fast decoder.
func TestWebhookBlock(t *testing.T) {
	g := graphOf(t, loadValid(t, "webhooks.hcl"), "deploy-hook")
	if len(g.Webhooks) != 2 || g.Webhooks[0].Name != "manual" || g.Webhooks[1].Name != "push" {
		t.Fatalf("webhooks = %+v, want manual and push in name order", g.Webhooks)
	}
	m, p := g.Webhooks[0], g.Webhooks[1]
	if m.Secret != "hook_key" || m.Signature != DefaultSignatureHeader || m.Key != nil {
		t.Errorf("manual = %+v, want secret hook_key, the default header, no key", m)
	}
	if p.Signature != "X-Hub-Signature-256" || p.Key == nil || p.Key.CEL != "body.after" {
		t.Errorf("push = %+v, want the canonical header and key body.after", p)
	}
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	back, err := graph.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if d := graph.Diff(g, back); len(d) != 0 {
		t.Fatalf("round trip changed the graph: %v", d)
	}
	prog, err := expr.Load(back)
	if err != nil {
		t.Fatal(err)
	}
	act := &expr.Activation{
		Body:    map[string]any{"ref": "refs/heads/main", "after": "abc123", "n": 7.0},
		Headers: map[string]string{"x-github-event": "push"},
	}
	in, err := prog.EvalValue(context.Background(), back.Webhook("push").Inputs, act)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.(map[string]any); got["ref"] != "refs/heads/main" || got["sha"] != "abc123" || got["event"] != "push" {
		t.Errorf("push inputs = %v", got)
	}
	key, err := prog.Eval(context.Background(), back.Webhook("push").Key, act)
	if err != nil || key != "abc123" {
		t.Errorf("push key = %v, %v; want abc123", key, err)
	}
	in, err = prog.EvalValue(context.Background(), back.Webhook("manual").Inputs, act)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.(map[string]any); got["sha"] != "7" {
		t.Errorf("manual inputs = %v, want sha 7", got)
	}
	if back.Webhook("nope") != nil {
		t.Error("Webhook of an unknown name is not nil")
	}
}

// TestWebhookChangeIsPatch: adding, changing and removing a webhook are
// PATCH changes that leave every step hash as it was; a graph without
// webhooks encodes no "webhooks" key.
func TestWebhookChangeIsPatch(t *testing.T) {
	src, err := os.ReadFile("testdata/valid/webhooks.hcl")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(text string) *graph.Graph {
		t.Helper()
		m, diags := LoadFile("x.hcl", []byte(text))
		if diags.HasErrors() {
			t.Fatalf("%s", diags.Error())
		}
		return m.Workflows[0].Graph
	}
	base := compile(string(src))
	changed := compile(strings.Replace(string(src), `key       = "body.after"`, `key       = "body.ref"`, 1))
	start := strings.Index(string(src), "  webhook \"push\"")
	end := strings.Index(string(src), "  step \"s\"")
	none := compile(string(src)[:start] + string(src)[end:])

	for _, tc := range []struct {
		name     string
		old, new *graph.Graph
		want     string
	}{
		{"changed", base, changed, `webhook "push" changed (key body.after → body.ref): PATCH`},
		{"removed", base, none, `webhook "manual" removed: PATCH`},
		{"added", none, base, `webhook "push" added: PATCH`},
	} {
		d := graph.Diff(tc.old, tc.new)
		var texts []string
		for _, c := range d {
			texts = append(texts, c.String())
		}
		if graph.RequiredBump(d) != graph.BumpPatch || !strings.Contains(strings.Join(texts, "\n"), tc.want) {
			t.Errorf("%s: diff = %q, want PATCH with %q", tc.name, texts, tc.want)
		}
		for i := range tc.old.Steps {
			if tc.old.Steps[i].Hash != tc.new.Steps[i].Hash {
				t.Errorf("%s: step hash changed", tc.name)
			}
		}
	}
	b, err := graph.Encode(none)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"webhooks"`) {
		t.Errorf("a graph without webhooks encodes a webhooks key: %s", b)
	}
}
