package lsp

import (
	"context"
	"strings"
	"testing"
)

const webhookDoc = `workflow "hooked" {
  version = "1.0.0"
  input "ref" { type = string }
  secret "hook_key" { env = "HOOK_KEY" }
  webhook "push" {
    secret = secret.hook_key
    inputs = { ref = "{{ body.ref }}" }
    key    = "headers['x-id']"
  }
  step "s" {
    set { r = "{{ input.ref }}" }
  }
}
`

// TestCompletionWebhookRoots: a webhook's inputs and key see body and
// headers (language.md §9.2) and nothing of a run.
func TestCompletionWebhookRoots(t *testing.T) {
	s, d := openFeatureDoc(t, webhookDoc)
	for _, at := range []struct{ marker string }{{"body.ref }}"}, {"headers['x-id']"}} {
		got := " " + labels(s.complete(d, offsetOf(t, webhookDoc, at.marker, 0))) + " "
		for _, w := range []string{"body", "headers"} {
			if !contains(got, w) {
				t.Errorf("at %q: %q missing from %q", at.marker, w, got)
			}
		}
		for _, w := range []string{"input", "run", "steps"} {
			if contains(got, w) {
				t.Errorf("at %q: %q proposed in %q", at.marker, w, got)
			}
		}
	}
}

func contains(words, w string) bool {
	for i := 0; i+len(w)+2 <= len(words); i++ {
		if words[i] == ' ' && words[i+1:i+1+len(w)] == w && words[i+1+len(w)] == ' ' {
			return true
		}
	}
	return false
}

// TestHoverWebhookRoots: hover on body, a field of body, and headers in a
// webhook's inputs and key gives their type, as on schedule.date or
// event.message. Before, it gave the whole expression's type: the two
// roots were unknown to the chain hover.
func TestHoverWebhookRoots(t *testing.T) {
	s, d := openFeatureDoc(t, webhookDoc)
	for _, c := range []struct {
		marker string
		n      int
		want   string
	}{
		{"body.ref }}", 1, "`body`: **any**"},
		{"body.ref }}", 6, "`body.ref`: **any**"},
		{"headers['x-id']", 2, "`headers`: **map(string)**"},
	} {
		h := s.hover(context.Background(), d, offsetOf(t, webhookDoc, c.marker, c.n))
		if h == nil || !strings.Contains(h.Contents.Value, c.want) {
			t.Errorf("hover at %q+%d: %+v, want %s", c.marker, c.n, h, c.want)
		}
	}
}
