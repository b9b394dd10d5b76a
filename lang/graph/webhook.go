package graph

import (
	"strings"
)

// Webhook is a webhook block: an HTTP endpoint that starts runs of the
// workflow when a signed request arrives (spec/language.md §9.2). Like a
// schedule it starts runs and does not change what a run does: adding,
// removing or changing one is a PATCH (see Diff).
//
//graph:gen diff=parts
type Webhook struct {
	Name string `json:"name" graph:"diff=-"`
	// Secret names the declared secret whose value signs the requests.
	Secret string `json:"secret" graph:"diff=secret"`
	// Signature is the request header that carries "sha256=<hex>", in
	// canonical form (X-Hub-Signature-256).
	Signature string `json:"signature" graph:"diff=signature"`
	// Inputs is the object of the inputs of the runs it starts, with body
	// and headers in scope; nil: none.
	Inputs *Value `json:"inputs,omitempty" graph:"slot=webhook_inputs,diff=same:inputs"`
	// Key, when set, is the run's key (a CEL string over body and
	// headers); nil: the workflow's key over the inputs, as for apply.
	Key *Expr `json:"key,omitempty" graph:"slot=webhook_key,diff=celtext:key"`
}

// Webhook returns the webhook named name, or nil.
func (g *Graph) Webhook(name string) *Webhook {
	for i := range g.Webhooks {
		if g.Webhooks[i].Name == name {
			return &g.Webhooks[i]
		}
	}
	return nil
}

func (v *encValidator) webhook(names map[string]bool, secrets map[string]bool, w Webhook) {
	where := encNamed("webhook", w.Name)
	v.unique(names, "webhook", w.Name)
	if !secrets[w.Secret] {
		v.add("%s: secret %q is not declared", where, w.Secret)
	}
	if !ValidHeaderName(w.Signature) {
		v.add("%s: signature header %q is not a header name", where, w.Signature)
	}
	if w.Inputs != nil {
		v.value(where, w.Inputs)
	}
	v.expr(where.in(" key"), w.Key)
}

// ValidHeaderName reports whether s is an HTTP header name (an RFC 9110
// token).
func ValidHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// webhooks compares the webhooks of two versions: every change is a
// PATCH, named by what changed.
func (d *differ) webhooks(_ string, o, n []Webhook) {
	diffNamed(d, o, n, func(w Webhook) string { return w.Name }, "webhook", func(path string, a, b Webhook) {
		if parts := webhookParts(&a, &b); len(parts) > 0 {
			d.add(path, BumpPatch, "changed (%s)", strings.Join(parts, ", "))
		}
	}, BumpPatch, diffAdded[Webhook](BumpPatch))
}
