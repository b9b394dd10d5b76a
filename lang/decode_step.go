package lang

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// This file decodes step blocks and their settings: depends_on, join, when,
// timeout, retry, breaker, foreach, until, interval, max_iterations,
// on_error and idempotency_key. The action block is in decode_action.go.

// stepDecl is a decoded step block, before compilation. Zero values mean
// "not set" (the compiler fills the defaults).
type stepDecl struct {
	Name           string
	NameRange      hcl.Range
	DeclRange      hcl.Range
	DependsOn      []refDecl
	Join           string
	When           *exprDecl
	TimeoutMS      int64
	Retry          *retryDecl
	Breaker        *refDecl
	Foreach        *foreachDecl
	Until          *exprDecl
	IntervalMS     int64
	MaxIterations  int
	OnError        string
	IdempotencyKey *dataNode
	Action         *actionDecl // nil: a join point
	Catch          []catchDecl
	Compensate     *compensateDecl
	// Settings maps each setting written (attribute or block name) to its
	// name's range, for "has no effect" and range errors; nil when none is.
	Settings map[string]hcl.Range
}

// release drops what a step declares once the step is built, keeping only
// its name and ranges: the compiler reads other steps' declarations only
// to know that they exist (their types come from the built steps), so a
// large workflow's parsed expressions are collected step by step as it
// compiles instead of all at its end. Checks deferred to the end of the
// compile hold their own expressions.
func (s *stepDecl) release() {
	*s = stepDecl{Name: s.Name, NameRange: s.NameRange, DeclRange: s.DeclRange}
}

// retryDecl is a retry block; nil fields were not set and come from
// defaults.retry, then from the built-in defaults.
type retryDecl struct {
	Attempts   *int
	BackoffMS  *int64
	Multiplier *float64
	MaxDelayMS *int64
	JitterMS   *int64
	When       *exprDecl
	// Ranges of the attributes checked against limits and each other.
	AttemptsRange, MaxDelayRange *hcl.Range
}

// catchDecl is a catch block: when (nil: any error) and next.
type catchDecl struct {
	When  *exprDecl
	Next  []refDecl
	Range hcl.Range // the block's type keyword
}

// compensateDecl is a compensate block: one action, on_cancel, timeout
// and retry.
type compensateDecl struct {
	Action    *actionDecl
	OnCancel  bool
	TimeoutMS int64
	Retry     *retryDecl
	Range     hcl.Range // the block's type keyword
	DefRange  hcl.Range
}

var compensateSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "on_cancel"}, {Name: "timeout"}},
	Blocks:     append([]hcl.BlockHeaderSchema{{Type: "retry"}}, actionBlockSchemas...),
}

var catchSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "when"}, {Name: "next", Required: true},
}}

type foreachDecl struct {
	Items            *exprDecl
	Concurrency      int
	OnFailure        string
	ConcurrencyRange *hcl.Range
}

var stepSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "depends_on"}, {Name: "join"}, {Name: "when"}, {Name: "timeout"},
		{Name: "breaker"}, {Name: "until"}, {Name: "interval"}, {Name: "max_iterations"},
		{Name: "on_error"}, {Name: "idempotency_key"},
	},
	Blocks: append([]hcl.BlockHeaderSchema{{Type: "retry"}, {Type: "foreach"}, {Type: "catch"}, {Type: "compensate"}}, actionBlockSchemas...),
}

// decodeStepBlock decodes step "NAME" { ... }.
func decodeStepBlock(block *hcl.Block, sm *SourceMap) (*stepDecl, hcl.Diagnostics) {
	s := &stepDecl{Name: block.Labels[0], NameRange: block.LabelRanges[0], DeclRange: block.DefRange}
	path := "step." + s.Name
	sm.addBlock(path, block)
	c, diags := content(block.Body, stepSchema)
	sm.addAttrs(path, c.Attributes)
	setting := func(name string, rng hcl.Range) {
		if s.Settings == nil {
			s.Settings = map[string]hcl.Range{}
		}
		s.Settings[name] = rng
	}
	for name, a := range c.Attributes {
		setting(name, a.NameRange)
	}
	for _, b := range c.Blocks {
		if b.Type == "retry" || b.Type == "foreach" {
			setting(b.Type, b.TypeRange)
		}
	}

	if a := c.Attributes["depends_on"]; a != nil {
		refs, d := staticRefList(a, "step", "step")
		diags = append(diags, d...)
		s.DependsOn = refs
	}
	if a := c.Attributes["join"]; a != nil {
		v, d := literalEnum(a, "all", "any", "first")
		diags = append(diags, d...)
		s.Join = v
	}
	if a := c.Attributes["on_error"]; a != nil {
		v, d := literalEnum(a, "fail", "continue")
		diags = append(diags, d...)
		s.OnError = v
	}
	if a := c.Attributes["when"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		s.When = e
	}
	if a := c.Attributes["timeout"]; a != nil {
		ms, d := literalDuration(a)
		diags = append(diags, d...)
		s.TimeoutMS = ms
	}
	if a := c.Attributes["breaker"]; a != nil {
		r, d := staticRef(a.Expr, "breaker", "breaker")
		diags = append(diags, d...)
		if !d.HasErrors() {
			s.Breaker = &r
		}
	}
	if a := c.Attributes["until"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		s.Until = e
	}
	if a := c.Attributes["interval"]; a != nil {
		ms, d := literalDurationOrZero(a)
		diags = append(diags, d...)
		s.IntervalMS = ms
		if c.Attributes["until"] == nil {
			diags = append(diags, untilOnly(a))
		}
	}
	if a := c.Attributes["max_iterations"]; a != nil {
		n, d := literalInt(a, 1, 1_000_000)
		diags = append(diags, d...)
		s.MaxIterations = int(n)
		if c.Attributes["until"] == nil {
			diags = append(diags, untilOnly(a))
		}
	}
	if a := c.Attributes["idempotency_key"]; a != nil {
		v, d := decodeData(a.Expr)
		diags = append(diags, d...)
		s.IdempotencyKey = v
	}

	var action *hcl.Block
	var retry, foreach, compensate *hcl.Block
	for _, b := range c.Blocks {
		switch b.Type {
		case "retry":
			if retry != nil {
				diags = append(diags, singleBlock("retry", retry, b))
				continue
			}
			retry = b
			r, d := decodeRetryBlock(b, path, sm)
			diags = append(diags, d...)
			s.Retry = r
		case "compensate":
			if compensate != nil {
				diags = append(diags, singleBlock("compensate", compensate, b))
				continue
			}
			compensate = b
			setting("compensate", b.TypeRange)
			cd, d := decodeCompensateBlock(b, path+".compensate", sm)
			diags = append(diags, d...)
			s.Compensate = cd
		case "catch":
			setting("catch", b.TypeRange)
			cd, d := decodeCatchBlock(b, path+".catch"+strconv.Itoa(len(s.Catch)), sm)
			diags = append(diags, d...)
			s.Catch = append(s.Catch, cd)
		case "foreach":
			if foreach != nil {
				diags = append(diags, singleBlock("foreach", foreach, b))
				continue
			}
			foreach = b
			f, d := decodeForeachBlock(b, path, sm)
			diags = append(diags, d...)
			s.Foreach = f
		default:
			if action != nil {
				diags = append(diags, multipleActions(action, b,
					"A step does exactly one thing: keep one action here and move the other into a step of its own (use depends_on to order them)."))
				continue
			}
			action = b
			act, d := decodeActionBlock(b, path, sm)
			diags = append(diags, d...)
			s.Action = act
		}
	}
	return s, diags
}

// decodeCompensateBlock decodes compensate { ACTION, on_cancel, timeout,
// retry }.
func decodeCompensateBlock(b *hcl.Block, path string, sm *SourceMap) (*compensateDecl, hcl.Diagnostics) {
	cd := &compensateDecl{Range: b.TypeRange, DefRange: b.DefRange}
	c, diags := content(b.Body, compensateSchema)
	sm.addBlock(path, b)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["on_cancel"]; a != nil {
		v, d := literalBool(a)
		diags = append(diags, d...)
		cd.OnCancel = v
	}
	if a := c.Attributes["timeout"]; a != nil {
		ms, d := literalDuration(a)
		diags = append(diags, d...)
		cd.TimeoutMS = ms
	}
	var action, retry *hcl.Block
	for _, blk := range c.Blocks {
		if blk.Type == "retry" {
			if retry != nil {
				diags = append(diags, singleBlock("retry", retry, blk))
				continue
			}
			retry = blk
			r, d := decodeRetryBlock(blk, path, sm)
			diags = append(diags, d...)
			cd.Retry = r
			continue
		}
		if action != nil {
			diags = append(diags, multipleActions(action, blk,
				"A compensation does one thing: keep one action here, or run the others from a child workflow."))
			continue
		}
		action = blk
		act, d := decodeActionBlock(blk, path, sm)
		diags = append(diags, d...)
		cd.Action = act
	}
	if action == nil && !diags.HasErrors() {
		diags = append(diags, errAt(b.DefRange, "Missing compensation action",
			"A compensate block holds the action that undoes the step: an exec, http or workflow block, like exec { command = [\"./bin/refund\", \"{{ steps.charge.output.json.id }}\"] }."))
	}
	if action != nil && cd.Action != nil {
		switch cd.Action.Kind {
		case graph.KindExec, graph.KindHTTP, graph.KindWorkflow:
		default:
			diags = append(diags, errAt(action.TypeRange, "Unsupported compensation action",
				"A compensation undoes a side effect, so it is an exec, http or workflow action; a %s block cannot be one.", cd.Action.Kind))
		}
	}
	return cd, diags
}

// decodeCatchBlock decodes catch { when, next }.
func decodeCatchBlock(b *hcl.Block, path string, sm *SourceMap) (catchDecl, hcl.Diagnostics) {
	cd := catchDecl{Range: b.TypeRange}
	c, diags := content(b.Body, catchSchema)
	sm.addBlock(path, b)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["when"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		cd.When = e
	}
	if a := c.Attributes["next"]; a != nil {
		refs, d := staticRefList(a, "step", "step")
		diags = append(diags, d...)
		cd.Next = refs
		if len(refs) == 0 && !d.HasErrors() {
			diags = append(diags, errAt(a.Expr.Range(), "Empty catch next",
				"A catch names the steps that run instead of the step's dependents when it takes an error, like next = [step.refund]."))
		}
	}
	return cd, diags
}

func untilOnly(a *hcl.Attribute) *hcl.Diagnostic {
	return errAt(a.NameRange, "Missing until",
		"The argument %q only applies to a step that repeats: add until = \"CONDITION\" to the step, or remove %s.", a.Name, a.Name)
}

// multipleActions reports a second action block, naming the first.
func multipleActions(first, again *hcl.Block, how string) *hcl.Diagnostic {
	return errAt(again.TypeRange, "Multiple actions",
		"This block has two actions: %s (at %s) and %s. %s", first.Type, posOf(first.DefRange), again.Type, how)
}

var retrySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "attempts"}, {Name: "backoff"}, {Name: "multiplier"},
		{Name: "max_delay"}, {Name: "jitter"}, {Name: "when"},
	},
}

// decodeRetryBlock decodes retry { attempts, backoff, multiplier,
// max_delay, jitter, when } in a step or in defaults.
func decodeRetryBlock(block *hcl.Block, parent string, sm *SourceMap) (*retryDecl, hcl.Diagnostics) {
	r := &retryDecl{}
	path := parent + ".retry"
	sm.addBlock(path, block)
	c, diags := content(block.Body, retrySchema)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["attempts"]; a != nil {
		n, d := literalInt(a, 1, 1_000_000)
		diags = append(diags, d...)
		if !d.HasErrors() {
			v := int(n)
			r.Attempts = &v
			r.AttemptsRange = a.Expr.Range().Ptr()
		}
	}
	if a := c.Attributes["max_delay"]; a != nil {
		r.MaxDelayRange = a.Expr.Range().Ptr()
	}
	durations := []struct {
		name string
		dst  **int64
	}{{"backoff", &r.BackoffMS}, {"max_delay", &r.MaxDelayMS}, {"jitter", &r.JitterMS}}
	for _, f := range durations {
		a := c.Attributes[f.name]
		if a == nil {
			continue
		}
		// backoff and jitter may be "0s"; max_delay is checked against
		// backoff once merged with the defaults.
		decode := literalDurationOrZero
		if f.name == "max_delay" {
			decode = literalDuration
		}
		ms, d := decode(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			*f.dst = &ms
		}
	}
	if a := c.Attributes["multiplier"]; a != nil {
		m, d := literalNumber(a, 1)
		diags = append(diags, d...)
		if !d.HasErrors() {
			r.Multiplier = &m
		}
	}
	if a := c.Attributes["when"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		r.When = e
	}
	return r, diags
}

var foreachSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "items", Required: true}, {Name: "concurrency"}, {Name: "on_failure"}},
}

// decodeForeachBlock decodes foreach { items, concurrency, on_failure }.
func decodeForeachBlock(block *hcl.Block, parent string, sm *SourceMap) (*foreachDecl, hcl.Diagnostics) {
	f := &foreachDecl{Concurrency: graph.DefaultForeachWorkers, OnFailure: "fail"}
	path := parent + ".foreach"
	sm.addBlock(path, block)
	c, diags := content(block.Body, foreachSchema)
	sm.addAttrs(path, c.Attributes)
	if a := c.Attributes["items"]; a != nil {
		e, d := decodeControl(a)
		diags = append(diags, d...)
		f.Items = e
	}
	if a := c.Attributes["concurrency"]; a != nil {
		n, d := literalInt(a, 1, 10_000)
		diags = append(diags, d...)
		f.Concurrency = int(n)
		f.ConcurrencyRange = a.Expr.Range().Ptr()
	}
	if a := c.Attributes["on_failure"]; a != nil {
		v, d := literalEnum(a, "fail", "continue", "dead_letter")
		diags = append(diags, d...)
		f.OnFailure = v
	}
	return f, diags
}

// String names a step for messages.
func (s *stepDecl) String() string { return fmt.Sprintf("step %q", s.Name) }

// stepDecodeBatch is the number of step blocks a goroutine of
// decodeStepBlocks takes at a time.
const stepDecodeBatch = 16

// decodeStepBlocks decodes step blocks, in file order. Step blocks are
// independent of each other (most of the time goes into parsing their CEL
// expressions), so a large workflow's steps are decoded by one goroutine
// per processor, each taking the next batch of blocks until none is left
// (a goroutine slowed down by other work takes fewer) and recording each
// batch into its own source map. The goroutines end before it returns;
// the batches' diagnostics and source maps are then added in file order,
// as one goroutine would have. Each block is dropped from blocks once
// decoded, so that its syntax tree can be collected while the rest are.
// A block decoded while the file was parsed (pre) is not decoded again:
// its declaration, diagnostics and ranges are taken in its place.
func decodeStepBlocks(blocks []*hcl.Block, sm *SourceMap, pre *predecoded) ([]*stepDecl, hcl.Diagnostics) {
	workers := min(runtime.GOMAXPROCS(0), len(blocks)/graph.ParallelStepDecode)
	if workers < 2 || pre != nil {
		steps := make([]*stepDecl, 0, len(blocks))
		var diags hcl.Diagnostics
		if pre != nil {
			sm.grow(pre.entries(blocks))
		}
		for i, b := range blocks {
			var s *stepDecl
			var d hcl.Diagnostics
			if p := pre.step(b); p != nil {
				s, d = p.decl, p.diags
				p.addTo(sm)
			} else {
				s, d = decodeStepBlock(b, sm)
			}
			blocks[i] = nil // decoded: its syntax is garbage
			diags = append(diags, d...)
			steps = append(steps, s)
		}
		return steps, diags
	}
	steps := make([]*stepDecl, len(blocks))
	batches := (len(blocks) + stepDecodeBatch - 1) / stepDecodeBatch
	parts := make([]hcl.Diagnostics, batches)
	maps := make([]*SourceMap, batches)
	var next atomic.Int64
	work := func() {
		for {
			b := int(next.Add(1)) - 1
			if b >= batches {
				return
			}
			lo, hi := b*stepDecodeBatch, min((b+1)*stepDecodeBatch, len(blocks))
			// Room for a step and its action block, and four
			// attributes, per step: most steps have no more.
			m := newSourceMapSized(sm.File, 2*(hi-lo), 4*(hi-lo))
			for i := lo; i < hi; i++ {
				s, d := decodeStepBlock(blocks[i], m)
				blocks[i] = nil // decoded: its syntax is garbage
				parts[b] = append(parts[b], d...)
				steps[i] = s
			}
			maps[b] = m
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	var diags hcl.Diagnostics
	for _, d := range parts {
		diags = append(diags, d...)
	}
	sm.merge(maps...)
	return steps, diags
}
