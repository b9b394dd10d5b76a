package lang

import (
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// This file checks a step's settings against its action kind and the
// workflow's limits (spec/language.md §8.1 and §15).

// settingKinds lists, for each step setting, the action kinds it applies
// to. A setting on another kind of step is an error: it would silently do
// nothing.
var settingKinds = map[string][]string{
	"timeout":         {graph.KindExec, graph.KindHTTP, graph.KindWorkflow},
	"retry":           {graph.KindExec, graph.KindHTTP, graph.KindWorkflow},
	"breaker":         {graph.KindExec, graph.KindHTTP},
	"foreach":         {graph.KindExec, graph.KindHTTP, graph.KindSet, graph.KindWorkflow},
	"until":           {graph.KindExec, graph.KindHTTP, graph.KindSet, graph.KindWorkflow},
	"on_error":        {graph.KindExec, graph.KindHTTP, graph.KindSet, graph.KindSleep, graph.KindWait, graph.KindWorkflow},
	"idempotency_key": {graph.KindExec, graph.KindHTTP},
}

// checkSettings reports settings that have no effect on the step's kind of
// action.
func (c *compiler) checkSettings(sd *stepDecl) {
	kind := graph.KindNone
	if sd.Action != nil {
		kind = sd.Action.Kind
		if kind == kindOpenAPI || kind == kindEmit {
			kind = graph.KindHTTP // an openapi action is an http request
		}
	}
	for _, name := range naming.NamesSorted(sd.Settings) {
		kinds, ok := settingKinds[name]
		if !ok || naming.ContainsName(kinds, kind) {
			continue
		}
		what := fmt.Sprintf("a %q step", kind)
		if kind == graph.KindNone {
			what = "a step without an action"
		}
		c.errorf(sd.Settings[name], "Setting has no effect",
			"%s has no effect on %s: it applies only to %s steps. Remove it.", name, what, orNames(kinds))
	}
}

// checkLimits reports settings above the workflow's limits.
func (c *compiler) checkLimits(sd *stepDecl, st *graph.Step) {
	l := c.g.Limits
	if f := sd.Foreach; f != nil && f.ConcurrencyRange != nil && f.Concurrency > l.Parallel {
		c.errorf(*f.ConcurrencyRange, "Value out of range",
			"foreach concurrency %d is more than limits.parallel (%d), the attempts one run may have in flight: lower it, or raise parallel in the limits block.", f.Concurrency, l.Parallel)
	}
	if f := sd.Foreach; f != nil && f.Items != nil && f.Items.Parsed != nil {
		// A literal list's length is known now: more items than the run's
		// attempts fails the step before its first item (semantics §14).
		if n, ok := f.Items.Parsed.ListLen(); ok && n > l.Attempts {
			d := errAt(f.Items.Range, "Foreach exceeds limits.attempts",
				"This foreach has %d items and a run may use %d step attempts (limits.attempts), one per item at least: the step will fail before its first item. Raise attempts in the limits block, or give it fewer items.", n, l.Attempts)
			d.Severity = hcl.DiagWarning
			c.diags = append(c.diags, d)
		}
	}
	if st.Until != nil && sd.MaxIterations > l.Attempts {
		c.errorf(c.w.Sources.Attr("step."+sd.Name+".max_iterations"), "Value out of range",
			"max_iterations %d is more than limits.attempts (%d), the step attempts of one run: lower it, or raise attempts in the limits block.", sd.MaxIterations, l.Attempts)
	}
	r := st.Retry
	if r == nil {
		return
	}
	own, def := sd.Retry, c.w.Defaults.Retry
	pick := func(get func(*retryDecl) *hcl.Range) *hcl.Range {
		if own != nil && get(own) != nil {
			return get(own)
		}
		if def != nil {
			return get(def)
		}
		return nil
	}
	if rng := pick(func(d *retryDecl) *hcl.Range { return d.AttemptsRange }); rng != nil && r.Attempts > l.Attempts {
		c.errorf(*rng, "Value out of range",
			"retry attempts %d is more than limits.attempts (%d), the step attempts of one run: lower it, or raise attempts in the limits block.", r.Attempts, l.Attempts)
	}
	if rng := pick(func(d *retryDecl) *hcl.Range { return d.MaxDelayRange }); rng != nil && r.MaxDelayMS > 0 && r.MaxDelayMS < r.BackoffMS {
		c.errorf(*rng, "Value out of range",
			"max_delay (%dms) is shorter than backoff (%dms), so it would cap even the first delay: make max_delay at least the backoff.", r.MaxDelayMS, r.BackoffMS)
	}
}

// warnAttemptCap warns when every run that completes must start more step
// keys than limits.attempts allows (semantics §14: each start of a step
// key, whatever its action, uses one attempt). It counts the steps that
// start in every completed run: those without a when, that no switch or
// catch chooses, whose dependencies are all such steps; a foreach step
// counts none (its list may be empty). So it never warns about a
// workflow that could complete, and a run of one it warns about fails
// with attempt_cap, however its branches go.
func (c *compiler) warnAttemptCap() {
	if len(c.g.Steps) <= c.g.Limits.Attempts {
		return // fewer steps than attempts: nothing to count
	}
	chosen := map[string]bool{}
	for _, s := range c.g.Steps {
		if sw := s.Action.Switch; sw != nil {
			for _, cs := range sw.Cases {
				for _, t := range cs.Next {
					chosen[t] = true
				}
			}
			for _, t := range sw.Default {
				chosen[t] = true
			}
		}
		for _, ct := range s.Catch {
			for _, t := range ct.Next {
				chosen[t] = true
			}
		}
	}
	always := make(map[string]bool, len(c.g.Steps))
	n := 0
	for _, s := range c.g.Steps { // in dependency order
		if s.When != nil || chosen[s.Name] || !allOf(s.Needs, always) {
			continue
		}
		always[s.Name] = true
		if s.Foreach == nil {
			n++
		}
	}
	if l := c.g.Limits.Attempts; n > l {
		at, written := c.w.Sources.find("limits.attempts", kindAttr)
		if !written {
			at = c.w.NameRange
		}
		d := errAt(at, "Workflow exceeds limits.attempts",
			"Every run of this workflow that completes starts at least %d steps, and a run may use %d step attempts (limits.attempts), one per step started: a run would fail with attempt_cap before its end. Raise attempts in the limits block (at most 1000000).", n, l)
		d.Severity = hcl.DiagWarning
		c.diags = append(c.diags, d)
	}
}

// allOf reports whether set holds every name.
func allOf(names []string, set map[string]bool) bool {
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return true
}
