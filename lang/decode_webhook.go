package lang

import (
	"net/textproto"
	"strconv"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// This file decodes and compiles a workflow's webhook blocks
// (spec/language.md §9.2): the secret is a static reference to a declared
// secret (secret.NAME), the signature a header name, the inputs are
// checked against the workflow's inputs as a schedule's are, with body and
// headers in scope, and the key is a CEL string over the same.

// DefaultSignatureHeader is the header a webhook reads its signature from
// when the block names none.
const DefaultSignatureHeader = "X-Hub-Signature-256"

// webhookDecl is a decoded webhook block.
type webhookDecl struct {
	Name      string
	NameRange hcl.Range
	DeclRange hcl.Range
	Secret    *refDecl
	Signature string
	Inputs    *dataNode
	Key       *exprDecl
}

var webhookSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "secret", Required: true}, {Name: "signature"}, {Name: "inputs"}, {Name: "key"},
	},
}

// decodeWebhookBlock decodes webhook "NAME" { ... }.
func decodeWebhookBlock(block *hcl.Block, sm *SourceMap) (*webhookDecl, hcl.Diagnostics) {
	w := &webhookDecl{Name: block.Labels[0], NameRange: block.LabelRanges[0], DeclRange: block.DefRange, Signature: DefaultSignatureHeader}
	path := "webhook." + w.Name
	sm.addBlock(path, block)
	diags := checkWorkflowName(w.Name, w.NameRange)
	for _, d := range diags {
		d.Summary, d.Detail = "Invalid webhook name", "Use up to 64 letters, digits, \"-\" and \"_\" in a webhook name, starting with a letter: it is part of the URL /hooks/WORKFLOW/NAME."
	}
	c, d := content(block.Body, webhookSchema)
	diags = append(diags, d...)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["secret"]; a != nil {
		r, d := staticRef(a.Expr, "secret", "declared secret")
		diags = append(diags, d...)
		if !d.HasErrors() {
			w.Secret = &r
		}
	}
	if a := c.Attributes["signature"]; a != nil {
		v, d := literalString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if !graph.ValidHeaderName(v) {
				diags = append(diags, errAt(a.Expr.Range(), "Invalid signature header",
					"%s is not an HTTP header name: name the header that carries \"sha256=<hex>\", like signature = %q.", strconv.Quote(v), DefaultSignatureHeader))
			} else {
				w.Signature = textproto.CanonicalMIMEHeaderKey(v)
			}
		}
	}
	if a := c.Attributes["inputs"]; a != nil {
		v, d := decodeData(a.Expr)
		diags = append(diags, d...)
		w.Inputs = v
	}
	if a := c.Attributes["key"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		w.Key = e
	}
	return w, diags
}

// buildWebhooks resolves each webhook's secret, checks its inputs against
// the workflow's inputs with body and headers in scope, and its key.
func (c *compiler) buildWebhooks() {
	known := make([]string, 0, len(c.g.Secrets))
	for _, s := range c.g.Secrets {
		known = append(known, s.Name)
	}
	inScope := c.graphScope(expr.SlotWebhookInputs)
	keyScope := c.graphScope(expr.SlotWebhookKey)
	for _, wd := range c.w.Webhooks {
		w := graph.Webhook{Name: wd.Name, Signature: wd.Signature}
		if r := wd.Secret; r != nil {
			if naming.ContainsName(known, r.Name) {
				w.Secret = r.Name
			} else {
				c.errorf(r.Range, "Unknown secret", "No secret named %q is declared in workflow %q: add a secret %q { env = \"VARIABLE\" } block, whose variable holds the webhook's signing key.%s",
					r.Name, c.w.Name, r.Name, naming.DidYouMean(r.Name, known))
			}
		}
		var in *graph.Value
		if wd.Inputs != nil {
			in = c.checkData(wd.Inputs, inScope)
			if in != nil && in.Type != nil && in.Type.Kind != graph.KindObject {
				c.errorf(wd.Inputs.Range, "Invalid webhook inputs",
					"A webhook's inputs are an object of the workflow's inputs, like inputs = { ref = \"{{ body.ref }}\" }; this value is a %s.", in.Type)
				in = nil
			}
			w.Inputs = in
		}
		at := wd.NameRange
		if wd.Inputs != nil {
			at = wd.Inputs.Range
		}
		c.checkInputObject(at, wd.Inputs, in, c.g, inputWords{
			unknown: "Unknown webhook input", wrongType: "Incorrect webhook input type", missing: "Missing webhook input",
			giver: "webhook " + strconv.Quote(wd.Name), where: "its inputs = { ... }",
		})
		if wd.Key != nil {
			w.Key = c.checkExpr(wd.Key, keyScope, graph.TypeString)
		}
		c.g.Webhooks = append(c.g.Webhooks, w)
	}
}
