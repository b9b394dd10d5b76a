package lang

import (
	"encoding/json"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// This file decodes a file's workflow blocks and their workflow-level
// blocks: input, secret, concurrency, defaults, breaker, limits, output,
// alert, schedule (decode_schedule.go) and webhook (decode_webhook.go). Steps are in decode_step.go, actions in decode_action.go.

// workflowDecl is a decoded workflow block, before compilation.
type workflowDecl struct {
	Name        string
	NameRange   hcl.Range
	DeclRange   hcl.Range
	Version     string
	Description string
	Key         *exprDecl
	Times       runTimes
	PassEnv     []string // sorted, without duplicates
	Inputs      []*inputDecl
	Secrets     []graph.Secret
	Concurrency *concurrencyDecl
	Defaults    defaultsDecl
	Breakers    []graph.Breaker
	Limits      graph.Limits
	Steps       []*stepDecl
	Outputs     []*outputDecl
	Alerts      []*alertDecl
	Schedules   []*scheduleDecl
	Webhooks    []*webhookDecl
	Sources     *SourceMap
}

// runTimes are a workflow's bounds on its runs' time: how long one may run
// (deadline) and how long a finished one is kept (retention).
type runTimes struct {
	DeadlineMS  int64
	RetentionMS int64
}

type inputDecl struct {
	graph.Input
	Range hcl.Range
}

type concurrencyDecl struct {
	Key        *exprDecl
	Limit      int
	OnConflict string
}

type defaultsDecl struct {
	TimeoutMS int64
	Retry     *retryDecl
}

type outputDecl struct {
	Name      string
	NameRange hcl.Range
	Value     *dataNode
}

type alertDecl struct {
	Name      string
	NameRange hcl.Range
	On        []string
	Action    *actionDecl
}

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "workflow", LabelNames: []string{"name"}}},
}

var workflowSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "version"},
		{Name: "description"},
		{Name: "key"},
		{Name: "deadline"},
		{Name: "retention"},
		{Name: "pass_env"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "input", LabelNames: []string{"name"}},
		{Type: "secret", LabelNames: []string{"name"}},
		{Type: "concurrency"},
		{Type: "defaults"},
		{Type: "breaker", LabelNames: []string{"name"}},
		{Type: "limits"},
		{Type: "step", LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"name"}},
		{Type: "alert", LabelNames: []string{"name"}},
		{Type: "schedule", LabelNames: []string{"name"}},
		{Type: "webhook", LabelNames: []string{"name"}},
	},
}

// decodeFile decodes every workflow block of a parsed file. It takes the
// file's syntax tree apart as it goes (a workflow's step blocks are cut
// from it, and each is dropped once decoded), so the caller must not use
// the tree afterwards: its outline is taken before (outlined).
func decodeFile(file *hcl.File) ([]*workflowDecl, hcl.Diagnostics) {
	return decodeFileWith(file, nil)
}

// decodeFileWith is decodeFile for a file whose step blocks were decoded
// while it was parsed (pre, see predecode.go; nil: none were).
func decodeFileWith(file *hcl.File, pre *predecoded) ([]*workflowDecl, hcl.Diagnostics) {
	c, diags := content(file.Body, fileSchema)
	var out []*workflowDecl
	for _, b := range c.Blocks {
		w, d := decodeWorkflowBlock(b, pre)
		diags = append(diags, d...)
		out = append(out, w)
	}
	return out, diags
}

// decodeWorkflowBlock decodes one workflow block. It always returns a
// workflowDecl, holding what could be decoded.
func decodeWorkflowBlock(block *hcl.Block, pre *predecoded) (*workflowDecl, hcl.Diagnostics) {
	w := &workflowDecl{
		Name:      block.Labels[0],
		NameRange: block.LabelRanges[0],
		DeclRange: block.DefRange,
		Sources:   newSourceMap(block.DefRange.Filename),
		Limits:    graph.Limits{Attempts: graph.DefaultAttempts, OutputBytes: graph.DefaultOutputBytes, Parallel: graph.DefaultParallel},
	}
	w.Sources.addBlock("workflow", block)
	diags := checkWorkflowName(w.Name, w.NameRange)
	c, d := content(block.Body, workflowSchema)
	diags = append(diags, d...)
	w.Sources.addAttrs("workflow", c.Attributes)

	if c.Attributes["version"] == nil {
		diags = append(diags, errAt(block.DefRange, "Missing version",
			"Every workflow declares its version: add version = \"1.0.0\" (MAJOR.MINOR.PATCH) to this block."))
	}
	if a := c.Attributes["version"]; a != nil {
		v, d := literalString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if _, err := graph.ParseVersion(v); err != nil {
				diags = append(diags, errAt(a.Expr.Range(), "Invalid version",
					"%s.", upperFirstLetter(err.Error())))
			} else {
				w.Version = v
			}
		}
	}
	if a := c.Attributes["description"]; a != nil {
		v, d := literalString(a)
		diags = append(diags, d...)
		w.Description = v
	}
	if a := c.Attributes["key"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		w.Key = e
	}
	if a := c.Attributes["deadline"]; a != nil {
		ms, d := literalDuration(a)
		diags = append(diags, d...)
		w.Times.DeadlineMS = ms
	}
	if a := c.Attributes["retention"]; a != nil {
		ms, d := literalDuration(a)
		diags = append(diags, d...)
		w.Times.RetentionMS = ms
	}
	if a := c.Attributes["pass_env"]; a != nil {
		v, d := decodePassEnv(a)
		diags = append(diags, d...)
		w.PassEnv = v
	}

	first := map[string]*hcl.Block{} // singleton blocks
	names := map[string]hcl.Range{}  // "kind name" -> first label
	once := func(b *hcl.Block) bool {
		if f := first[b.Type]; f != nil {
			diags = append(diags, singleBlock(b.Type, f, b))
			return false
		}
		first[b.Type] = b
		return true
	}
	unique := func(b *hcl.Block) bool {
		key := b.Type + " " + b.Labels[0]
		if f, dup := names[key]; dup {
			diags = append(diags, duplicate(b.Type, b.Labels[0], f, b.LabelRanges[0]))
			return false
		}
		names[key] = b.LabelRanges[0]
		return true
	}
	var stepBlocks []*hcl.Block
	for _, b := range c.Blocks {
		switch b.Type {
		case "input":
			diags = append(diags, checkName(b, "input")...)
			if !unique(b) {
				continue
			}
			in, d := decodeInputBlock(b)
			diags = append(diags, d...)
			w.Inputs = append(w.Inputs, in)
			w.Sources.addBlock("input."+in.Name, b)
		case "secret":
			diags = append(diags, checkName(b, "secret")...)
			if !unique(b) {
				continue
			}
			s, d := decodeSecretBlock(b)
			diags = append(diags, d...)
			w.Secrets = append(w.Secrets, s)
			w.Sources.addBlock("secret."+s.Name, b)
		case "concurrency":
			if !once(b) {
				continue
			}
			cc, d := decodeConcurrencyBlock(b, w.Sources)
			diags = append(diags, d...)
			w.Concurrency = cc
		case "defaults":
			if !once(b) {
				continue
			}
			df, d := decodeDefaultsBlock(b, w.Sources)
			diags = append(diags, d...)
			w.Defaults = df
		case "breaker":
			diags = append(diags, checkName(b, "breaker")...)
			if !unique(b) {
				continue
			}
			br, d := decodeBreakerBlock(b)
			diags = append(diags, d...)
			w.Breakers = append(w.Breakers, br)
			w.Sources.addBlock("breaker."+br.Name, b)
		case "limits":
			if !once(b) {
				continue
			}
			diags = append(diags, decodeLimitsBlock(b, &w.Limits, w.Sources)...)
		case "step":
			diags = append(diags, checkName(b, "step")...)
			if !unique(b) {
				continue
			}
			stepBlocks = append(stepBlocks, b)
		case "output":
			diags = append(diags, checkName(b, "output")...)
			if !unique(b) {
				continue
			}
			o, d := decodeOutputBlock(b, w.Sources)
			diags = append(diags, d...)
			w.Outputs = append(w.Outputs, o)
		case "alert":
			if !unique(b) {
				continue
			}
			al, d := decodeAlertBlock(b, w.Sources)
			diags = append(diags, d...)
			w.Alerts = append(w.Alerts, al)
		case "schedule":
			if !unique(b) {
				continue
			}
			sc, d := decodeScheduleBlock(b, w.Sources)
			diags = append(diags, d...)
			w.Schedules = append(w.Schedules, sc)
		case "webhook":
			if !unique(b) {
				continue
			}
			wh, d := decodeWebhookBlock(b, w.Sources)
			diags = append(diags, d...)
			w.Webhooks = append(w.Webhooks, wh)
		}
	}
	// The step blocks are the bulk of a large workflow's syntax tree: cut
	// them from it, so that decodeStepBlocks, which drops each once
	// decoded, holds the only references.
	c = nil
	if sb, ok := block.Body.(*hclsyntax.Body); ok {
		sb.Blocks = nil
	}
	steps, d := decodeStepBlocks(stepBlocks, w.Sources, pre)
	diags = append(diags, d...)
	w.Steps = steps
	if len(w.Steps) == 0 {
		diags = append(diags, errAt(w.NameRange, "Workflow has no steps",
			"A workflow does its work in steps: add at least one step \"NAME\" { ... } block."))
	}
	return w, diags
}

// upperFirstLetter capitalises the first letter of a message.
func upperFirstLetter(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

var inputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}},
}

// decodeInputBlock decodes input "NAME" { type, default, description }. The
// type is required; a default must be a literal of the type and is kept as
// canonical JSON.
func decodeInputBlock(block *hcl.Block) (*inputDecl, hcl.Diagnostics) {
	in := &inputDecl{Input: graph.Input{Name: block.Labels[0], Type: graph.TypeAny}, Range: block.LabelRanges[0]}
	c, diags := content(block.Body, inputSchema)
	if c.Attributes["type"] == nil {
		diags = append(diags, errAt(block.DefRange, "Missing input type",
			"Declare the input's type, like type = string (or number, bool, list(string), map(number), object({...}), any)."))
	}
	if a := c.Attributes["type"]; a != nil {
		t, d := decodeTypeExpr(a.Expr)
		diags = append(diags, d...)
		in.Type = t
	}
	if a := c.Attributes["description"]; a != nil {
		_, d := literalString(a)
		diags = append(diags, d...)
	}
	if a := c.Attributes["default"]; a != nil && !diags.HasErrors() {
		v, d := literal(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			g, err := ctyToGo(v)
			switch {
			case err != nil:
				diags = append(diags, errAt(a.Expr.Range(), "Invalid default", "The default cannot be used: %v.", err))
			case g == nil && in.Type.Kind != graph.KindAny:
				diags = append(diags, errAt(a.Expr.Range(), "Invalid default",
					"A default of null is only allowed for an input of type any. Give a value of type %s, or remove the default to make the input required.", in.Type))
			default:
				if err := conformLiteral(g, in.Type, ""); err != nil {
					diags = append(diags, errAt(a.Expr.Range(), "Invalid default",
						"The default does not match the input's type: %v. Change the default or the type.", err))
				} else {
					in.Default = json.RawMessage(literalJSON(g))
				}
			}
		}
	}
	return in, diags
}

var secretSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "env", Required: true}},
}

// decodeSecretBlock decodes secret "NAME" { env }.
func decodeSecretBlock(block *hcl.Block) (graph.Secret, hcl.Diagnostics) {
	s := graph.Secret{Name: block.Labels[0]}
	c, diags := content(block.Body, secretSchema)
	if a := c.Attributes["env"]; a != nil {
		v, d := literalString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && (!naming.ValidIdent(v) || len(v) > 255) {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid environment variable name",
				"%q cannot be an environment variable name: use letters, digits and underscores, starting with a letter or underscore, like env = \"API_TOKEN\".", v))
		}
		s.Env = v
	}
	return s, diags
}

var concurrencySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "key", Required: true}, {Name: "limit"}, {Name: "on_conflict"}},
}

// decodeConcurrencyBlock decodes concurrency { key, limit = 1,
// on_conflict = "queue" }.
func decodeConcurrencyBlock(block *hcl.Block, sm *SourceMap) (*concurrencyDecl, hcl.Diagnostics) {
	cc := &concurrencyDecl{Limit: 1, OnConflict: "queue"}
	sm.addBlock("concurrency", block)
	c, diags := content(block.Body, concurrencySchema)
	sm.addAttrs("concurrency", c.Attributes)
	if a := c.Attributes["key"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		cc.Key = e
	}
	if a := c.Attributes["limit"]; a != nil {
		n, d := literalInt(a, 1, 10_000)
		diags = append(diags, d...)
		cc.Limit = int(n)
	}
	if a := c.Attributes["on_conflict"]; a != nil {
		v, d := literalEnum(a, "queue", "skip", "fail")
		diags = append(diags, d...)
		cc.OnConflict = v
	}
	return cc, diags
}

var defaultsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "timeout"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "retry"}},
}

// decodeDefaultsBlock decodes defaults { timeout, retry { ... } }.
func decodeDefaultsBlock(block *hcl.Block, sm *SourceMap) (defaultsDecl, hcl.Diagnostics) {
	var df defaultsDecl
	sm.addBlock("defaults", block)
	c, diags := content(block.Body, defaultsSchema)
	sm.addAttrs("defaults", c.Attributes)
	if a := c.Attributes["timeout"]; a != nil {
		ms, d := literalDuration(a)
		diags = append(diags, d...)
		df.TimeoutMS = ms
	}
	for i, b := range c.Blocks {
		if i > 0 {
			diags = append(diags, singleBlock("retry", c.Blocks[0], b))
			continue
		}
		r, d := decodeRetryBlock(b, "defaults", sm)
		diags = append(diags, d...)
		df.Retry = r
	}
	return df, diags
}

var breakerSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "failures", Required: true}, {Name: "cooldown", Required: true}, {Name: "on_open"}},
}

// decodeBreakerBlock decodes breaker "NAME" { failures, cooldown, on_open }.
func decodeBreakerBlock(block *hcl.Block) (graph.Breaker, hcl.Diagnostics) {
	br := graph.Breaker{Name: block.Labels[0]}
	c, diags := content(block.Body, breakerSchema)
	if a := c.Attributes["failures"]; a != nil {
		n, d := literalInt(a, 1, 1<<20)
		diags = append(diags, d...)
		br.Failures = int(n)
	}
	if a := c.Attributes["cooldown"]; a != nil {
		ms, d := literalDuration(a)
		diags = append(diags, d...)
		br.CooldownMS = ms
	}
	if a := c.Attributes["on_open"]; a != nil {
		v, d := literalEnum(a, "wait", "fail")
		diags = append(diags, d...)
		if v == "fail" {
			br.OnOpen = v
		}
	}
	return br, diags
}

var limitsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "attempts"}, {Name: "output_bytes"}, {Name: "parallel"}},
}

// decodeLimitsBlock decodes limits { attempts, output_bytes, parallel }
// over the defaults already in l.
func decodeLimitsBlock(block *hcl.Block, l *graph.Limits, sm *SourceMap) hcl.Diagnostics {
	sm.addBlock("limits", block)
	c, diags := content(block.Body, limitsSchema)
	sm.addAttrs("limits", c.Attributes)
	if a := c.Attributes["attempts"]; a != nil {
		n, d := literalInt(a, 1, 1_000_000)
		diags = append(diags, d...)
		if !d.HasErrors() {
			l.Attempts = int(n)
		}
	}
	if a := c.Attributes["output_bytes"]; a != nil {
		n, d := literalInt(a, 1024, 64<<20)
		diags = append(diags, d...)
		if !d.HasErrors() {
			l.OutputBytes = n
		}
	}
	if a := c.Attributes["parallel"]; a != nil {
		n, d := literalInt(a, 1, 256)
		diags = append(diags, d...)
		if !d.HasErrors() {
			l.Parallel = int(n)
		}
	}
	return diags
}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "value", Required: true}, {Name: "description"}},
}

// decodeOutputBlock decodes output "NAME" { value, description }.
func decodeOutputBlock(block *hcl.Block, sm *SourceMap) (*outputDecl, hcl.Diagnostics) {
	o := &outputDecl{Name: block.Labels[0], NameRange: block.LabelRanges[0]}
	path := "output." + o.Name
	sm.addBlock(path, block)
	c, diags := content(block.Body, outputSchema)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["value"]; a != nil {
		v, d := decodeData(a.Expr)
		diags = append(diags, d...)
		o.Value = v
	}
	if a := c.Attributes["description"]; a != nil {
		_, d := literalString(a)
		diags = append(diags, d...)
	}
	return o, diags
}

var alertSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "on", Required: true}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "http"}, {Type: "exec"}},
}

// alertEvents are the run endings an alert can be sent on.
var alertEvents = []string{"failed", "interrupted", "dead_lettered", "timed_out"}

// decodeAlertBlock decodes alert "NAME" { on = [...], http {...} | exec
// {...} }.
func decodeAlertBlock(block *hcl.Block, sm *SourceMap) (*alertDecl, hcl.Diagnostics) {
	al := &alertDecl{Name: block.Labels[0], NameRange: block.LabelRanges[0]}
	path := "alert." + al.Name
	sm.addBlock(path, block)
	diags := checkWorkflowName(al.Name, al.NameRange)
	for _, d := range diags {
		d.Summary, d.Detail = "Invalid alert name", "Use letters, digits, \"-\" and \"_\" in an alert name, starting with a letter."
	}
	c, d := content(block.Body, alertSchema)
	diags = append(diags, d...)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["on"]; a != nil {
		on, d := decodeAlertEvents(a)
		diags = append(diags, d...)
		al.On = on
	}
	var first *hcl.Block
	for _, b := range c.Blocks {
		if first != nil {
			diags = append(diags, multipleActions(first, b, "An alert sends exactly one notification: keep one block, or declare a second alert."))
			continue
		}
		first = b
		act, d := decodeActionBlock(b, path, sm)
		diags = append(diags, d...)
		al.Action = act
	}
	if first == nil && !d.HasErrors() {
		diags = append(diags, errAt(block.DefRange, "Missing alert action",
			"An alert needs an http or an exec block that says how to send the notification."))
	}
	return al, diags
}

func decodeAlertEvents(a *hcl.Attribute) ([]string, hcl.Diagnostics) {
	exprs, diags := hcl.ExprList(a.Expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{incorrectType(a, "a list of events", `["failed"]`)}
	}
	if len(exprs) == 0 {
		return nil, hcl.Diagnostics{errAt(a.Expr.Range(), "Missing alert event",
			"List the run endings that send this alert: %s.", orNames(alertEvents))}
	}
	seen := map[string]bool{}
	var on []string
	for _, e := range exprs {
		s, d := literalString(&hcl.Attribute{Name: "on", Expr: e, Range: e.Range(), NameRange: a.NameRange})
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		ok := false
		for _, ev := range alertEvents {
			ok = ok || ev == s
		}
		if !ok {
			diags = append(diags, errAt(e.Range(), "Unknown alert event",
				"%q is not a run ending: use %s.%s", s, orNames(alertEvents), naming.DidYouMean(s, alertEvents)))
			continue
		}
		if !seen[s] {
			seen[s] = true
			on = append(on, s)
		}
	}
	return on, diags
}
