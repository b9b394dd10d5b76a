package interp

// Version decisions for blocked runs: old (resume on the bound graph), new
// (cancel, start a fresh run of the newest version with the same inputs and
// key) and migrate (rebind to the newest version, keeping the completed
// steps whose definition and whole upstream are unchanged). Every decision
// is an event version_decided. spec/versioning.md §5 states the rules.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Choice is a version decision for a blocked run.
type Choice string

// The three choices.
const (
	// ChoiceOld resumes the run on the graph it is bound to.
	ChoiceOld Choice = "old"
	// ChoiceNew cancels the run and starts a fresh run of the newest
	// version with the same inputs and key.
	ChoiceNew Choice = "new"
	// ChoiceMigrate moves the run to the newest version, keeping what is
	// still valid.
	ChoiceMigrate Choice = "migrate"
)

// ParseChoice parses "old", "new" or "migrate".
func ParseChoice(s string) (Choice, error) {
	switch c := Choice(s); c {
	case ChoiceOld, ChoiceNew, ChoiceMigrate:
		return c, nil
	}
	return "", fmt.Errorf("%q is not a version decision; choose old, new or migrate", s)
}

// DecisionPlan is what a decision for a blocked run is about: the
// classified changes between its bound graph and the newest stored
// version, and what each choice would do.
type DecisionPlan struct {
	Run      store.Run
	From, To string // the bound version and the newest stored one
	Changes  []graph.Change
	Bump     graph.Bump
	// Keep and Rerun are the completed (or skipped, or continued-failed)
	// steps a migration keeps and runs again, in the new graph's order.
	Keep, Rerun []string
	// NewErr says why "new" cannot work (the run's inputs do not fit the
	// new version); MigrateErr why "migrate" cannot. Nil when they can.
	NewErr, MigrateErr error

	oldL, newL *loaded
	newV       store.Version
	inputs     map[string]any // the run's inputs carried to the new version
	steps      []store.Step
}

// PlanDecision reads a run, its bound graph and the newest stored version
// of its workflow and says what each choice would do. runID may be any
// run reference (ResolveRun). The run need not be blocked (the plan is the same).
func (e *Engine) PlanDecision(ctx context.Context, runID string) (*DecisionPlan, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("plan a version decision for run %s: %w", runID, err)
	}
	p := &DecisionPlan{Run: run, From: run.Version}
	if p.oldL, err = e.load(ctx, run.Workflow, run.GraphHash); err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	vs, err := e.st.VersionHeads(ctx, run.Workflow)
	if err != nil {
		return nil, fmt.Errorf("run %s: list versions of workflow %q: %w", run.ID, run.Workflow, err)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("run %s: no version of workflow %q is stored: %w", run.ID, run.Workflow, store.ErrNotFound)
	}
	p.newV = vs[len(vs)-1]
	p.To = p.newV.Version
	if p.newL, err = e.load(ctx, run.Workflow, p.newV.Hash); err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	p.Changes = graph.Diff(p.oldL.g, p.newL.g)
	p.Bump = graph.RequiredBump(p.Changes)
	if p.steps, err = e.st.StepList(ctx, run.ID); err != nil {
		return nil, fmt.Errorf("run %s: load steps: %w", run.ID, err)
	}
	p.inputs, p.NewErr = carryInputs(p.newL.g, run)
	p.Keep, p.Rerun, p.MigrateErr = graph.MigrationPlan(p.oldL.g, p.newL.g, settledSteps(p.oldL, p.steps))
	if p.MigrateErr == nil {
		p.MigrateErr = p.NewErr
	}
	if p.MigrateErr == nil {
		p.MigrateErr = p.checkKept()
	}
	return p, nil
}

// settledSteps lists the steps of a run that settled with a recorded
// result (completed, skipped, or failed under on_error = "continue"), as
// lang.MigrationPlan wants them.
func settledSteps(l *loaded, steps []store.Step) []string {
	var out []string
	for _, s := range steps {
		ls := l.step(s.Step)
		if s.Key != s.Step || ls == nil {
			continue
		}
		if s.Status == store.StepCompleted || s.Status == store.StepSkipped ||
			(s.Status == store.StepFailed && ls.OnError == "continue") {
			out = append(out, s.Step)
		}
	}
	return out
}

// carryInputs fits a run's inputs to another version of its workflow:
// inputs the version no longer declares are dropped, new ones take their
// defaults, and every value must have its declared type.
func carryInputs(g *graph.Graph, run store.Run) (map[string]any, error) {
	given := decodeMap(run.Inputs)
	declared := map[string]bool{}
	for _, in := range g.Inputs {
		declared[in.Name] = true
	}
	kept := map[string]any{}
	for k, v := range given {
		if declared[k] {
			kept[k] = v
		}
	}
	for _, in := range g.Inputs {
		if _, ok := kept[in.Name]; !ok && in.Default == nil {
			return nil, fmt.Errorf("version %s requires input %q (type %s), which the run was not started with", g.Version, in.Name, in.Type)
		}
	}
	inputs, err := checkInputs(g, kept)
	if err != nil {
		return nil, fmt.Errorf("the run's inputs do not fit version %s: %w", g.Version, err)
	}
	return inputs, nil
}

// checkKept checks that the new graph accepts the recorded output of every
// kept step: its output type there must describe the value.
func (p *DecisionPlan) checkKept() error {
	rows := map[string]store.Step{}
	for _, s := range p.steps {
		if s.Key == s.Step {
			rows[s.Step] = s
		}
	}
	for _, name := range p.Keep {
		s, row := p.newL.step(name), rows[name]
		if row.Status != store.StepCompleted || len(row.Output) == 0 {
			continue
		}
		out := decodeJSON(row.Output)
		var err error
		if s.Foreach != nil {
			items, ok := out.([]any)
			if !ok {
				err = fmt.Errorf("the recorded output is not a list of items")
			}
			for i, it := range items {
				if err == nil {
					err = checkOutput(s, it, fmt.Sprintf("output[%d]", i))
				}
			}
		} else {
			err = checkOutput(s, out, "output")
		}
		if err != nil {
			return fmt.Errorf("version %s cannot take the recorded output of step %q: %v", p.To, name, err)
		}
	}
	return nil
}

// checkOutput checks a recorded output of step s against its type
// (graph.StepOutput). An http output recorded before outputs had a request
// part is taken as it is: an expression that reads the part fails on it at
// run time, naming the missing key.
func checkOutput(s *graph.Step, v any, path string) error {
	err := graph.CheckValue(graph.StepOutput(s), v, path)
	if err != nil && graph.CheckValue(s.OutputType, v, path) == nil {
		return nil
	}
	return err
}

// DecideParams name a decision.
type DecideParams struct {
	RunID  string // a run reference (ResolveRun)
	Choice Choice
	// By says who decided, for the event: "cli", "tui", "apply --on-major",
	// "apply prompt", plus whatever identifies the person (OS user).
	By string
	// From is the version the run was bound to when the decider looked at
	// it (the plan shown on a screen or prompt); "" for the version it is
	// bound to when Decide reads it. A run that was decided or rebound
	// since is not decided again.
	From string
}

// DecidedError says that a run's version decision was already taken, by
// someone else or at the same moment: the decision asked for was not
// written. It wraps store.ErrConflict.
type DecidedError struct {
	RunID    string
	By       string // who decided, as the version_decided event says
	Choice   Choice
	NewRunID string // the replacement, for "new"
	At       time.Time
	Status   store.RunStatus // the run's status when the refusal was made
}

func (d *DecidedError) Error() string {
	what := string(d.Choice)
	if d.NewRunID != "" {
		what += " (replaced by run " + d.NewRunID + ")"
	}
	return fmt.Sprintf("run %s was already decided by %s: %s; it is %s now", d.RunID, d.By, what, d.Status)
}

// Unwrap makes a DecidedError a store.ErrConflict.
func (d *DecidedError) Unwrap() error { return store.ErrConflict }

// LastDecision returns the version decision taken on a run that is not
// blocked since (nil when there is none): with from set, the newest
// decision made on the run bound to that version. Decide uses it to say
// who won when a decision comes too late.
func (e *Engine) LastDecision(ctx context.Context, runID, from string) (*DecidedError, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", runID, err)
	}
	evs, err := e.st.EventList(ctx, store.EventListParams{RunID: run.ID})
	if err != nil {
		return nil, fmt.Errorf("run %s: read its history: %w", run.ID, err)
	}
	var last *DecidedError
	for _, ev := range evs {
		if ev.Kind == "version_blocked" && from == "" {
			last = nil // blocked again: a decision before does not answer this block
		}
		if ev.Kind != "version_decided" {
			continue
		}
		var d struct {
			Choice   Choice `json:"choice"`
			By       string `json:"by"`
			From     string `json:"from"`
			NewRunID string `json:"new_run_id"`
			Replaces string `json:"replaces"`
		}
		if json.Unmarshal(ev.Data, &d) != nil || d.Replaces != "" || (from != "" && d.From != from) {
			continue
		}
		last = &DecidedError{RunID: run.ID, By: d.By, Choice: d.Choice, NewRunID: d.NewRunID, At: ev.At, Status: run.Status}
	}
	if last != nil && from == "" && run.Status == store.RunBlocked {
		return nil, nil
	}
	return last, nil
}

// refusal says why a decision for run, looked at on version from ("" for
// its version now), cannot be taken: it was decided already (a
// DecidedError), it is not blocked, or it is bound to another version
// than the one looked at. nil when the decision can go on.
func (e *Engine) refusal(ctx context.Context, run store.Run, from string) error {
	if run.Status == store.RunBlocked && (from == "" || from == run.Version) {
		return nil
	}
	d, err := e.LastDecision(ctx, run.ID, from)
	if err != nil {
		return err
	}
	if d != nil {
		return d
	}
	if run.Status != store.RunBlocked {
		return fmt.Errorf("run %s is %s, not blocked; only a run blocked by a new MAJOR version takes a version decision: %w", run.ID, run.Status, store.ErrConflict)
	}
	return fmt.Errorf("run %s is bound to version %s now, not %s as it was shown; look at it again: %w", run.ID, run.Version, from, store.ErrConflict)
}

// Decision is a decision carried out.
type Decision struct {
	Plan   *DecisionPlan
	Choice Choice
	// Run is the run to continue: the decided run for old and migrate, the
	// new run for new (the decided run is canceled then).
	Run store.Run
}

// Decide carries out a version decision for a blocked run. It is an error
// wrapping store.ErrConflict when the run is not blocked (a *DecidedError
// when a decision was taken on it already), and when the choice cannot
// work (its inputs do not fit the new version, or the new graph cannot take
// the kept outputs); nothing is written then. The run becomes pending (old,
// migrate) or canceled with a fresh run started (new); the caller drives
// it or leaves it to a worker.
//
// The decision is one store transaction and a compare-and-set: it is
// written only if the run is still blocked on the version and graph it was
// read with (and looked at, p.From), so of two people deciding at once
// exactly one wins and the other gets a *DecidedError naming the winner's
// choice. For "new", the replacement run is created, and the old run's
// child runs canceled, in that same transaction, so a crash leaves either
// the blocked run alone or the canceled run tree and its replacement,
// never two live runs.
//
// A decision is written with no lease: a blocked run is never claimed.
func (e *Engine) Decide(ctx context.Context, p DecideParams) (Decision, error) {
	plan, err := e.PlanDecision(ctx, p.RunID)
	if err != nil {
		return Decision{}, fmt.Errorf("decide run %s: %w", p.RunID, err)
	}
	run := plan.Run
	d := Decision{Plan: plan, Choice: p.Choice, Run: run}
	if err := e.refusal(ctx, run, p.From); err != nil {
		return d, err
	}
	now := e.clk.Now()
	data := map[string]any{"choice": p.Choice, "from": plan.From, "to": plan.To, "by": p.By, "host": e.opts.Owner.Host}
	t := store.Transition{RunID: run.ID, Now: now, Run: &store.RunUpdate{},
		Expect: &store.RunExpect{Status: store.RunBlocked, Version: run.Version, GraphHash: run.GraphHash}}
	var cancelKids []string
	switch p.Choice {
	case ChoiceOld:
		data["to"] = plan.From
		t.Run.Status, t.Run.WaitReason, t.Run.AvailableAt = ptr(store.RunPending), ptr(""), ptr(now)
	case ChoiceMigrate:
		if plan.MigrateErr != nil {
			instead := "old or new"
			if plan.NewErr != nil {
				instead = "old"
			}
			return d, fmt.Errorf("run %s cannot migrate to version %s: %v; choose %s instead: %w", run.ID, plan.To, plan.MigrateErr, instead, store.ErrConflict)
		}
		data["kept"], data["rerun"] = nonNil(plan.Keep), nonNil(plan.Rerun)
		if cancelKids, err = e.migrateWrites(ctx, plan, &t); err != nil {
			return d, err
		}
	case ChoiceNew:
		if plan.NewErr != nil {
			return d, fmt.Errorf("run %s cannot be replaced by a run of version %s: %v; choose old instead: %w", run.ID, plan.To, plan.NewErr, store.ErrConflict)
		}
		ins := e.insertParams(plan.newL, plan.newV, plan.inputs, run.Key)
		// The replacement runs where the old run's workflow file was, so
		// its relative exec paths resolve as the old run's did.
		ins.WorkDir = run.WorkDir
		ins.Events = append(ins.Events, store.EventWrite{Kind: "version_decided", Data: mustJSON(map[string]any{
			"choice": ChoiceNew, "from": plan.From, "to": plan.To, "replaces": run.ID, "by": p.By, "host": e.opts.Owner.Host})})
		// The replacement is created in the decision's own transaction.
		ins.Now, ins.AvailableAt = now, now
		t.Runs = []store.RunInsertParams{ins}
		data["new_run_id"] = ins.ID
		if cancelKids, err = e.replaceWrites(ctx, plan, ins.ID, &t); err != nil {
			return d, err
		}
	default:
		return d, fmt.Errorf("decide run %s: %q is not a version decision; choose old, new or migrate", run.ID, p.Choice)
	}
	data["message"] = fmt.Sprintf("decided %s by %s: %s", p.Choice, p.By, plan.Describe(p.Choice))
	t.Events = append([]store.EventWrite{{Kind: "version_decided", Data: mustJSON(data)}}, t.Events...)
	// The child runs the decision ends are canceled in its own commit too.
	t.CancelTrees = cancelKids
	if err := e.com.commit(ctx, t); err != nil {
		if isLeaseLost(err) {
			return d, fmt.Errorf("run %s was taken by a worker while it was decided: %w", run.ID, store.ErrConflict)
		}
		if errors.Is(err, store.ErrConflict) {
			// Someone else decided (or rebound) the run since it was read.
			cur, gerr := e.st.RunGet(ctx, run.ID)
			if gerr != nil {
				return d, fmt.Errorf("decide run %s: %w (and reading it again: %v)", run.ID, err, gerr)
			}
			if rerr := e.refusal(ctx, cur, run.Version); rerr != nil {
				return d, rerr
			}
		}
		return d, fmt.Errorf("decide run %s: %w", run.ID, err)
	}
	e.wakePools()
	next := run.ID
	if p.Choice == ChoiceNew {
		next = t.Runs[0].ID
	}
	if d.Run, err = e.st.RunGet(ctx, next); err != nil {
		return d, fmt.Errorf("decide run %s: %w", run.ID, err)
	}
	return d, nil
}

// migrateWrites fills t with a migration: the run rebound to the new
// version and pending; every step key that is not kept and exists in the
// new graph reset to pending (attempt numbers go on, the retry budget
// starts afresh); unfinished keys of steps the new graph lacks canceled.
// It returns the child runs of reset steps, to cancel in the same commit.
func (e *Engine) migrateWrites(ctx context.Context, plan *DecisionPlan, t *store.Transition) ([]string, error) {
	keep := map[string]bool{}
	for _, k := range plan.Keep {
		keep[k] = true
	}
	atts, err := e.st.AttemptList(ctx, plan.Run.ID, "")
	if err != nil {
		return nil, fmt.Errorf("decide run %s: %w", plan.Run.ID, err)
	}
	last := map[string]int{}
	for _, a := range atts {
		last[a.StepKey] = max(last[a.StepKey], a.Attempt)
	}
	var children []string
	for _, s := range plan.steps {
		if keep[s.Step] {
			continue
		}
		var st rowState
		if len(s.State) > 0 {
			_ = json.Unmarshal(s.State, &st)
		}
		if st.Wait == waitChild && st.Child != "" && !s.Status.Terminal() {
			children = append(children, st.Child)
		}
		if plan.newL.step(s.Step) == nil {
			// Its rows stay, with their history, but leave the run's
			// step counts (the listings' done/total).
			if !slices.Contains(t.DropSteps, s.Step) {
				t.DropSteps = append(t.DropSteps, s.Step)
			}
			if !s.Status.Terminal() {
				t.Steps = append(t.Steps, store.StepWrite{Key: s.Key, Step: s.Step, Index: s.Index, Iteration: s.Iteration,
					Status: store.StepCanceled, Attempts: s.Attempts, FinishedAt: t.Now,
					Detail: "dropped: version " + plan.To + " has no step " + s.Step})
			}
			continue
		}
		if s.Status == store.StepPending && len(s.State) == 0 {
			continue
		}
		w := store.StepWrite{Key: s.Key, Step: s.Step, Index: s.Index, Iteration: s.Iteration, Status: store.StepPending, Attempts: s.Attempts}
		if last[s.Key] > 0 {
			w.State = mustJSON(&rowState{Base: last[s.Key]})
		}
		t.Steps = append(t.Steps, w)
	}
	u := t.Run
	u.Status, u.WaitReason, u.AvailableAt = ptr(store.RunPending), ptr(""), ptr(t.Now)
	u.Version, u.GraphHash = ptr(plan.newV.Version), ptr(plan.newV.Hash)
	return children, nil
}

// replaceWrites fills t with the end of a run replaced by nr: canceled,
// with its unfinished steps and running attempts canceled. It returns the
// unfinished child runs, to cancel in the same commit.
func (e *Engine) replaceWrites(ctx context.Context, plan *DecisionPlan, newID string, t *store.Transition) ([]string, error) {
	run := plan.Run
	msg := fmt.Sprintf("replaced by run %s of version %s (version decision: new)", newID, plan.To)
	u := t.Run
	u.Status, u.WaitReason, u.FinishedAt = ptr(store.RunCanceled), ptr(""), ptr(t.Now)
	u.Error = mustJSON(runError{Kind: "canceled", Message: msg, Type: problemType("canceled")})
	u.ClearCancel = true
	for _, s := range plan.steps {
		if s.Status.Terminal() || s.Status == store.StepPending {
			continue
		}
		t.Steps = append(t.Steps, store.StepWrite{Key: s.Key, Step: s.Step, Index: s.Index, Iteration: s.Iteration,
			Status: store.StepCanceled, Attempts: s.Attempts, Output: s.Output, StartedAt: s.StartedAt, FinishedAt: t.Now, State: s.State})
	}
	atts, err := e.st.AttemptList(ctx, run.ID, "")
	if err != nil {
		return nil, fmt.Errorf("decide run %s: %w", run.ID, err)
	}
	for _, a := range atts {
		if a.Status == store.AttemptRunning {
			a.Status, a.FinishedAt = store.AttemptCanceled, t.Now
			a.Error = mustJSON(&stepError{Kind: "canceled", Message: "the run was replaced by a run of a new version"})
			t.Attempts = append(t.Attempts, attemptWrite(&a))
		}
	}
	t.Events = append(t.Events, store.EventWrite{Kind: "run_canceled", Data: mustJSON(map[string]any{"message": msg})})
	kids, err := e.st.RunChildren(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("decide run %s: %w", run.ID, err)
	}
	var ids []string
	for _, k := range kids {
		if !k.Status.Terminal() {
			ids = append(ids, k.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Differs says how the newest version differs from the run's, to follow
// "version TO": "is stored and differs in a MAJOR way", or, for a new
// MAJOR whose changes need less (a larger bump than needed is allowed,
// and the run is blocked by the version number, versioning §4), "is a new
// MAJOR (its changes need only MINOR)".
func (p *DecisionPlan) Differs() string {
	from, ferr := graph.ParseVersion(p.From)
	to, terr := graph.ParseVersion(p.To)
	if ferr == nil && terr == nil && to.Major > from.Major && p.Bump < graph.BumpMajor {
		if p.Bump == graph.BumpNone {
			return "is a new MAJOR (its changes need no bump)"
		}
		return fmt.Sprintf("is a new MAJOR (its changes need only %s)", p.Bump)
	}
	return fmt.Sprintf("is stored and differs in a %s way", p.Bump)
}

// Describe says in words what a choice does to the run of the plan.
func (p *DecisionPlan) Describe(c Choice) string {
	switch c {
	case ChoiceOld:
		return fmt.Sprintf("resume on %s, the graph it is bound to; %s is used by new runs", p.From, p.To)
	case ChoiceNew:
		return fmt.Sprintf("cancel it and start a fresh run of %s with the same inputs", p.To)
	case ChoiceMigrate:
		return fmt.Sprintf("move it to %s; keep: %s; re-run: %s", p.To, listOr(p.Keep, "none"), listOr(p.Rerun, "none"))
	}
	return string(c)
}

func listOr(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ", ")
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
