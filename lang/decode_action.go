package lang

import (
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// This file decodes the action blocks: exec, http, set, sleep, wait,
// workflow, fail and switch.

// actionDecl is a decoded action block: its kind and the attributes of
// that kind, one embedded struct a kind (their fields are promoted, so a
// decoder or the compiler names a.Command, a.URL). Kind says which of them
// is used; the others stay zero.
//
// A long workflow is mostly set steps, and every step declaration is held
// between decoding and building: the kinds other than set are held behind
// one pointer, which a set action points at noActionMore, shared by all
// and never written (it reads as all zero).
type actionDecl struct {
	Kind  string
	Range hcl.Range // the block's type keyword

	setDecl
	*actionMore
}

// actionMore holds the attributes of the kinds other than set.
type actionMore struct {
	execDecl
	httpDecl
	sleepDecl
	waitDecl
	childDecl
	failDecl
	switchDecl
	// OpenAPI holds an openapi block's own attributes (nil for the
	// others); its server, headers, body and expect are in httpDecl.
	OpenAPI *openapiDecl
	emitDecl
}

// noActionMore is the actionMore of every set action: all zero, never
// written.
var noActionMore = &actionMore{}

// execDecl holds an exec block's attributes.
type execDecl struct {
	Command *dataNode
	Shell   bool
	Dir     *dataNode
	Env     *dataNode
	Stdin   *dataNode
	PassEnv []string // sorted, without duplicates
}

// httpDecl holds an http block's attributes.
type httpDecl struct {
	Method  string
	URL     *dataNode
	Headers *dataNode
	Body    *dataNode
	Expect  []int
	Query   *dataNode
	// NoRedirects is follow_redirects = false.
	NoRedirects bool
	Auth        *authDecl
}

// authDecl is an http block's auth { basic { username, password } } or
// auth { bearer = ... }.
type authDecl struct {
	Username, Password, Bearer *dataNode
	Range                      hcl.Range
	// HeaderRange is where the block's headers set Authorization too.
	HeaderRange *hcl.Range
}

// setDecl holds a set block's values, sorted by name.
type setDecl struct {
	Values []namedData
}

// namedData is one value of a set block.
type namedData struct {
	Name string
	Node *dataNode // nil when the value does not parse (its error is reported)
}

// sleepDecl holds a sleep block's attributes: DurationMS or SleepUntil.
type sleepDecl struct {
	DurationMS int64
	SleepUntil *dataNode
}

// waitDecl holds a wait block's attributes.
type waitDecl struct {
	Signal    string
	TimeoutMS int64
	WaitType  *graph.Type // nil: any
}

// childDecl holds a workflow block's attributes (the child run).
type childDecl struct {
	Workflow      string
	WorkflowRange hcl.Range // the name attribute's value
	Pin           string
	Input         *dataNode
}

// failDecl holds a fail block's message and problem fields.
type failDecl struct {
	Message *dataNode
	// Raise is the error raised again (error = "{{ steps.X.error }}").
	Raise                                        *dataNode
	ProblemType, Status, Title, Detail, Instance *dataNode
}

// switchDecl holds a switch block's cases.
type switchDecl struct {
	Cases   []caseDecl
	Default []refDecl
}

// caseDecl is one case of a switch.
type caseDecl struct {
	When *exprDecl
	Next []refDecl
}

var actionBlockSchemas = []hcl.BlockHeaderSchema{
	{Type: graph.KindExec}, {Type: graph.KindHTTP}, {Type: graph.KindSet}, {Type: graph.KindSleep},
	{Type: graph.KindWait}, {Type: graph.KindWorkflow}, {Type: graph.KindFail}, {Type: graph.KindSwitch},
	{Type: kindOpenAPI}, {Type: kindEmit},
}

// httpMethods are the methods an http action may use.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

var (
	execSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "command", Required: true}, {Name: "shell"}, {Name: "dir"}, {Name: "env"}, {Name: "stdin"}, {Name: "pass_env"},
	}}
	httpSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "method"}, {Name: "url", Required: true}, {Name: "headers"}, {Name: "body"}, {Name: "expect"},
		{Name: "query"}, {Name: "follow_redirects"},
	}, Blocks: []hcl.BlockHeaderSchema{{Type: "auth"}}}
	authSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "bearer"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "basic"}},
	}
	basicSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "username", Required: true}, {Name: "password", Required: true},
	}}
	sleepSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "duration"}, {Name: "until"},
	}}
	waitSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "signal", Required: true}, {Name: "timeout"}, {Name: "type"},
	}}
	childSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "name", Required: true}, {Name: "version", Required: true}, {Name: "input"},
	}}
	failSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "message"}, {Name: "error"}, {Name: "type"}, {Name: "status"}, {Name: "title"}, {Name: "detail"}, {Name: "instance"},
	}}
	switchSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "default"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "case"}},
	}
	caseSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "when", Required: true}, {Name: "next", Required: true},
	}}
)

// decodeActionBlock decodes an action block of the step or alert at
// parent.
func decodeActionBlock(block *hcl.Block, parent string, sm *SourceMap) (*actionDecl, hcl.Diagnostics) {
	act := &actionDecl{Kind: block.Type, Range: block.TypeRange, actionMore: noActionMore}
	if block.Type != graph.KindSet {
		act.actionMore = &actionMore{}
	}
	path := parent + "." + block.Type
	sm.addBlock(path, block)
	var diags hcl.Diagnostics
	data := func(attrs hcl.Attributes, name string) *dataNode {
		a := attrs[name]
		if a == nil {
			return nil
		}
		v, d := decodeData(a.Expr)
		diags = append(diags, d...)
		return v
	}
	switch block.Type {
	case graph.KindExec:
		c, d := content(block.Body, execSchema)
		diags = append(diags, d...)
		sm.addAttrs(path, c.Attributes)
		act.Command = data(c.Attributes, "command")
		act.Dir = data(c.Attributes, "dir")
		act.Env = data(c.Attributes, "env")
		act.Stdin = data(c.Attributes, "stdin")
		if a := c.Attributes["pass_env"]; a != nil {
			v, d := decodePassEnv(a)
			diags = append(diags, d...)
			act.PassEnv = v
		}
		if a := c.Attributes["shell"]; a != nil {
			v, d := literalBool(a)
			diags = append(diags, d...)
			act.Shell = v
		}
		if !d.HasErrors() {
			diags = append(diags, checkExecLiterals(c.Attributes, act.Shell)...)
		}
	case graph.KindHTTP:
		c, d := content(block.Body, httpSchema)
		diags = append(diags, d...)
		sm.addAttrs(path, c.Attributes)
		act.Method = "GET"
		if a := c.Attributes["method"]; a != nil {
			m, d := literalString(a)
			diags = append(diags, d...)
			if !d.HasErrors() {
				act.Method = strings.ToUpper(m)
				if !naming.ContainsName(httpMethods, act.Method) {
					diags = append(diags, errAt(a.Expr.Range(), "Invalid method",
						"%q is not an HTTP method flowrun sends: use %s.%s", m, orNames(httpMethods), naming.DidYouMean(m, httpMethods)))
				}
			}
		}
		act.URL = data(c.Attributes, "url")
		act.Headers = data(c.Attributes, "headers")
		act.Body = data(c.Attributes, "body")
		act.Query = data(c.Attributes, "query")
		diags = append(diags, decodeHTTPLiterals(c.Attributes, act)...)
		for i, b := range c.Blocks {
			if i > 0 {
				diags = append(diags, singleBlock("auth", c.Blocks[0], b))
				continue
			}
			ad, d := decodeAuth(b, path+".auth", sm, data)
			diags = append(diags, d...)
			act.Auth = ad
		}
	case graph.KindSet:
		attrs, d := block.Body.JustAttributes()
		diags = append(diags, d...)
		sm.addAttrs(path, attrs)
		for _, name := range naming.NamesSorted(attrs) {
			a := attrs[name]
			if !naming.ValidIdent(name) || len(name) > maxNameLen || reservedNames[name] {
				diags = append(diags, errAt(a.NameRange, "Invalid set attribute name",
					"%q cannot be the name of an output field: use up to 64 letters, digits and underscores, starting with a letter or underscore, and not a CEL reserved word.", name))
				continue
			}
			// A value that does not parse (nil, its error reported) still
			// names a field, so a step that reads it is not told that the
			// field does not exist.
			act.Values = append(act.Values, namedData{Name: name, Node: data(attrs, name)})
		}
	case graph.KindSleep:
		c, d := content(block.Body, sleepSchema)
		diags = append(diags, d...)
		sm.addAttrs(path, c.Attributes)
		dur, until := c.Attributes["duration"], c.Attributes["until"]
		switch {
		case dur != nil && until != nil:
			diags = append(diags, errAt(until.NameRange, "Conflicting sleep arguments",
				"A sleep waits either for a duration or until a time, not both: remove duration or until."))
		case dur == nil && until == nil && !d.HasErrors():
			diags = append(diags, errAt(block.DefRange, "Missing sleep argument",
				"Say how long to sleep, like duration = \"10m\", or until when, like until = \"{{ input.not_before }}\" (an RFC 3339 time)."))
		}
		if dur != nil {
			ms, d := literalDuration(dur)
			diags = append(diags, d...)
			act.DurationMS = ms
		}
		if until != nil && dur == nil {
			act.SleepUntil = data(c.Attributes, "until")
			diags = append(diags, checkSleepUntilLiteral(until)...)
		}
	case graph.KindWait:
		c, d := content(block.Body, waitSchema)
		diags = append(diags, d...)
		sm.addAttrs(path, c.Attributes)
		if a := c.Attributes["signal"]; a != nil {
			s, d := literalString(a)
			diags = append(diags, d...)
			if !d.HasErrors() && !validSignal(s) {
				diags = append(diags, errAt(a.Expr.Range(), "Invalid signal name",
					"%q cannot be a signal name: use letters, digits, \"-\", \"_\" and \".\", like signal = \"approval\".", s))
			}
			act.Signal = s
		}
		if a := c.Attributes["timeout"]; a != nil {
			ms, d := literalDuration(a)
			diags = append(diags, d...)
			act.TimeoutMS = ms
		}
		if a := c.Attributes["type"]; a != nil {
			t, d := decodeTypeExpr(a.Expr)
			diags = append(diags, d...)
			if !d.HasErrors() && t.Kind != graph.KindAny {
				act.WaitType = t
			}
		}
	case graph.KindWorkflow:
		c, d := content(block.Body, childSchema)
		diags = append(diags, d...)
		sm.addAttrs(path, c.Attributes)
		if a := c.Attributes["name"]; a != nil {
			s, d := literalString(a)
			diags = append(diags, d...)
			if !d.HasErrors() {
				diags = append(diags, checkWorkflowName(s, a.Expr.Range())...)
			}
			act.Workflow, act.WorkflowRange = s, a.Expr.Range()
		}
		if a := c.Attributes["version"]; a != nil {
			s, d := literalString(a)
			diags = append(diags, d...)
			if !d.HasErrors() {
				if _, err := graph.ParsePin(s); err != nil {
					diags = append(diags, errAt(a.Expr.Range(), "Invalid version pin",
						"%q is not a version pin: write \"1\" to pin the MAJOR version, \"1.2\" to pin MAJOR.MINOR, or \"1.2.3\" for one exact version.", s))
				}
			}
			act.Pin = s
		}
		act.Input = data(c.Attributes, "input")
	case graph.KindFail:
		c, d := content(block.Body, failSchema)
		diags = append(diags, d...)
		sm.addAttrs(path, c.Attributes)
		act.Message = data(c.Attributes, "message")
		act.Raise = data(c.Attributes, "error")
		act.ProblemType = data(c.Attributes, "type")
		act.Status = data(c.Attributes, "status")
		act.Title = data(c.Attributes, "title")
		act.Detail = data(c.Attributes, "detail")
		act.Instance = data(c.Attributes, "instance")
		if act.Message == nil && act.Raise == nil && !d.HasErrors() {
			diags = append(diags, errAt(block.DefRange, "Missing fail message",
				"A fail block says why the run fails: add message = \"...\", or error = \"{{ steps.NAME.error }}\" to raise a caught error again."))
		}
		if a := c.Attributes["status"]; a != nil && act.Status != nil && act.Status.IsLit {
			if _, sd := literalInt(a, 100, 599); sd.HasErrors() {
				diags = append(diags, errAt(a.Expr.Range(), "Invalid status code",
					"A fail status is an HTTP status, a whole number from 100 to 599, like status = 409."))
			}
		}
	case graph.KindSwitch:
		d := decodeSwitchBody(block, act, path, sm)
		diags = append(diags, d...)
	case kindOpenAPI:
		diags = append(diags, decodeOpenAPIBlock(block, act, path, sm)...)
	case kindEmit:
		diags = append(diags, decodeEmitBlock(block, act, path, sm, data)...)
	}
	return act, diags
}

// decodeAuth decodes an http block's auth: one basic block or bearer.
func decodeAuth(b *hcl.Block, path string, sm *SourceMap, data func(hcl.Attributes, string) *dataNode) (*authDecl, hcl.Diagnostics) {
	ad := &authDecl{Range: b.TypeRange}
	c, diags := content(b.Body, authSchema)
	sm.addBlock(path, b)
	sm.addAttrs(path, c.Attributes)
	ad.Bearer = data(c.Attributes, "bearer")
	for i, bb := range c.Blocks {
		if i > 0 {
			diags = append(diags, singleBlock("basic", c.Blocks[0], bb))
			continue
		}
		bc, d := content(bb.Body, basicSchema)
		diags = append(diags, d...)
		sm.addBlock(path+".basic", bb)
		sm.addAttrs(path+".basic", bc.Attributes)
		ad.Username = data(bc.Attributes, "username")
		ad.Password = data(bc.Attributes, "password")
	}
	switch {
	case ad.Bearer != nil && len(c.Blocks) > 0:
		diags = append(diags, errAt(b.DefRange, "Conflicting auth",
			"An auth block gives one kind of credentials: keep basic { username, password } or bearer, not both."))
	case ad.Bearer == nil && len(c.Blocks) == 0 && !diags.HasErrors():
		diags = append(diags, errAt(b.DefRange, "Missing credentials",
			"Say which credentials to send: auth { bearer = \"{{ secrets.token }}\" } or auth { basic { username = \"bot\", password = \"{{ secrets.password }}\" } }."))
	}
	return ad, diags
}

func validSignal(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok {
			return false
		}
	}
	return true
}

// decodeHTTPLiterals checks the literal headers and decodes
// follow_redirects and expect, the literal attributes that http, openapi
// and emit share (an attribute a block's schema lacks is simply absent).
func decodeHTTPLiterals(attrs hcl.Attributes, act *actionDecl) hcl.Diagnostics {
	diags := checkHTTPLiterals(attrs)
	if a := attrs["follow_redirects"]; a != nil {
		v, d := literalBool(a)
		diags = append(diags, d...)
		act.NoRedirects = !d.HasErrors() && !v
	}
	if a := attrs["expect"]; a != nil {
		codes, d := decodeExpect(a)
		diags = append(diags, d...)
		act.Expect = codes
	}
	return diags
}

// decodeExpect decodes expect = [200, 201]: HTTP statuses 100 to 599.
func decodeExpect(a *hcl.Attribute) ([]int, hcl.Diagnostics) {
	var exprs []hcl.Expression
	if tup, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		for _, e := range tup.Exprs {
			exprs = append(exprs, e)
		}
	} else {
		return nil, hcl.Diagnostics{incorrectType(a, "a list of HTTP statuses", "[200, 201]")}
	}
	var diags hcl.Diagnostics
	var codes []int
	seen := map[int]bool{}
	for _, e := range exprs {
		n, d := literalInt(&hcl.Attribute{Name: "expect", Expr: e, Range: e.Range(), NameRange: a.NameRange}, 100, 599)
		if d.HasErrors() {
			diags = append(diags, errAt(e.Range(), "Invalid status code",
				"Each expected status must be a whole number from 100 to 599, like expect = [200, 201]."))
			continue
		}
		if !seen[int(n)] {
			seen[int(n)] = true
			codes = append(codes, int(n))
		}
	}
	if len(exprs) == 0 {
		diags = append(diags, errAt(a.Expr.Range(), "Invalid status code",
			"List at least one expected status, like expect = [200], or remove expect to accept any 2xx status."))
	}
	return codes, diags
}

// decodeSwitchBody decodes switch { case { when, next } ... default }.
func decodeSwitchBody(block *hcl.Block, act *actionDecl, path string, sm *SourceMap) hcl.Diagnostics {
	c, diags := content(block.Body, switchSchema)
	sm.addAttrs(path, c.Attributes)
	for i, b := range c.Blocks {
		var cs caseDecl
		cc, d := content(b.Body, caseSchema)
		diags = append(diags, d...)
		cpath := path + ".case" + strconv.Itoa(i)
		sm.addBlock(cpath, b)
		sm.addAttrs(cpath, cc.Attributes)
		if a := cc.Attributes["when"]; a != nil {
			e, d := decodeControl(a)
			diags = append(diags, d...)
			cs.When = e
		}
		if a := cc.Attributes["next"]; a != nil {
			refs, d := staticRefList(a, "step", "step")
			diags = append(diags, d...)
			cs.Next = refs
		}
		act.Cases = append(act.Cases, cs)
	}
	if len(c.Blocks) == 0 && !diags.HasErrors() {
		diags = append(diags, errAt(block.DefRange, "Missing switch case",
			"A switch needs at least one case block, like case { when = \"input.express\" next = [step.ship_express] }."))
	}
	if a := c.Attributes["default"]; a != nil {
		refs, d := staticRefList(a, "step", "step")
		diags = append(diags, d...)
		act.Default = refs
	}
	return diags
}
