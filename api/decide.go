package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Decider takes version decisions (spec/versioning.md §5).
type Decider interface {
	// Decide takes the version decision of the run ref names. A parked
	// run bound to an older MAJOR than one stored since is blocked first,
	// as a worker's claim would block it. A run that takes no decision is
	// a *Refusal; one decided by someone else meanwhile (or since from,
	// the version the caller saw it bound to) an *interp.DecidedError,
	// and nothing is written then.
	Decide(ctx context.Context, ref string, choice interp.Choice, from, by string) (*Decided, error)
	// PlanDecision says what each choice would do to the run ref names:
	// the changes from its version to the newest, the steps a migration
	// keeps and runs again, and why a choice cannot work. It writes
	// nothing.
	PlanDecision(ctx context.Context, ref string) (*interp.DecisionPlan, error)
}

// PlanDecision implements Decider.
func (l *Local) PlanDecision(ctx context.Context, ref string) (*interp.DecisionPlan, error) {
	return l.eng.PlanDecision(ctx, ref)
}

// PlanDecision implements Decider.
func (c *Client) PlanDecision(ctx context.Context, ref string) (*interp.DecisionPlan, error) {
	id := ref
	if v, err := c.resolveSlash(ctx, ref); err != nil {
		return nil, err
	} else if v != "" {
		id = v
	}
	var p interp.DecisionPlan
	if err := c.call(ctx, http.MethodGet, runPath(id, "/decision/plan"), nil, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Decided is a decision taken: the run that goes on (for new, the run
// that replaces the decided one) and what the decision did.
type Decided struct {
	Run *interp.RunView
	DecisionJSON
}

// DecisionJSON is what a decision did: the answer's "decision" member of
// POST /v1/runs/{id}/decision.
type DecisionJSON struct {
	// RunID is the decided run (for new, the run it canceled).
	RunID  string `json:"run_id"`
	Choice string `json:"choice"`
	// From is the version the run was bound to, To the one it was
	// decided against.
	From string `json:"from"`
	To   string `json:"to"`
	// Keep and Rerun are the steps a migration keeps and runs again.
	Keep  []string `json:"keep"`
	Rerun []string `json:"rerun"`
}

// DecidedProblemJSON is the wire form of an interp.DecidedError: the
// problem's "decided" member.
type DecidedProblemJSON struct {
	RunID    string `json:"run_id"`
	By       string `json:"by"`
	Choice   string `json:"choice"`
	NewRunID string `json:"new_run_id"`
	Status   string `json:"status"`
}

// DecidedProblemOf is the wire form of d.
func DecidedProblemOf(d *interp.DecidedError) *DecidedProblemJSON {
	return &DecidedProblemJSON{RunID: d.RunID, By: d.By, Choice: string(d.Choice), NewRunID: d.NewRunID, Status: string(d.Status)}
}

// Decide implements Decider.
func (l *Local) Decide(ctx context.Context, ref string, choice interp.Choice, from, by string) (*Decided, error) {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	if run, err = l.eng.Rebind(ctx, run.ID); err != nil {
		return nil, fmt.Errorf("checking the version of run %s: %w", ref, err)
	}
	if run.Status != store.RunBlocked {
		if d, err := l.eng.LastDecision(ctx, run.ID, ""); err != nil {
			return nil, fmt.Errorf("reading the history of run %s: %w", run.ID, err)
		} else if d != nil {
			return nil, d
		}
		if run.Status.Terminal() {
			// Nothing goes on with an ended run, so no Continue: the
			// refusal says what can be done with it, as resume does on
			// the store.
			hint := fmt.Sprintf("See it with: flowrun show %s", run.ID)
			if run.Status != store.RunCompleted {
				hint = fmt.Sprintf("Redrive it with: flowrun retry %s", run.ID)
			}
			return nil, &Refusal{Status: http.StatusConflict,
				Message: fmt.Sprintf("run %s already ended (%s); it takes no version decision", run.ID, run.Status), Hint: hint}
		}
		o, err := l.eng.OfferDecision(ctx, run)
		if err != nil {
			return nil, fmt.Errorf("checking the version of run %s: %w", run.ID, err)
		}
		why := o.Reason
		if why == "" {
			why = fmt.Sprintf("run %s is %s and cannot be blocked now", run.ID, run.Status)
		}
		return nil, &Refusal{Status: http.StatusConflict,
			Message:  fmt.Sprintf("run %s is %s and takes no version decision: %s", run.ID, run.Status, why),
			Continue: run.ID}
	}
	if from == "" {
		from = run.Version
	}
	d, err := l.eng.Decide(ctx, interp.DecideParams{RunID: run.ID, Choice: choice, By: by, From: from})
	var de *interp.DecidedError
	switch {
	case errors.As(err, &de):
		return nil, de
	case errors.Is(err, store.ErrConflict):
		hint := fmt.Sprintf("See the changes with: flowrun plan FILE, or: flowrun diff %s@%s %s@NEWEST", run.Workflow, run.Version, run.Workflow)
		if d.Plan != nil {
			hint = fmt.Sprintf("See the changes with: flowrun diff %s@%s %s@%s", run.Workflow, d.Plan.From, run.Workflow, d.Plan.To)
		}
		return nil, &Refusal{Status: http.StatusConflict, Message: trimSentinel(err), Hint: hint}
	case err != nil:
		return nil, fmt.Errorf("deciding run %s: %w", run.ID, err)
	}
	view, err := l.eng.Show(ctx, d.Run.ID)
	if err != nil {
		return nil, err
	}
	return &Decided{Run: view, DecisionJSON: DecisionJSON{RunID: run.ID, Choice: string(d.Choice), From: d.Plan.From, To: d.Plan.To,
		Keep: nonNil(d.Plan.Keep), Rerun: nonNil(d.Plan.Rerun)}}, nil
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// DecidedJSON is the answer of POST /v1/runs/{id}/decision: the run that
// goes on, as show --json prints it, with the member "decision" added.
func DecidedJSON(d *Decided) ([]byte, error) {
	run, err := d.Run.MarshalJSON()
	if err != nil {
		return nil, err
	}
	dj, err := json.Marshal(d.DecisionJSON)
	if err != nil {
		return nil, err
	}
	out := append(run[:len(run)-1:len(run)-1], `,"decision":`...)
	out = append(out, dj...)
	return append(out, '}'), nil
}

// Decide implements Decider; by is the server's to say (the token).
func (c *Client) Decide(ctx context.Context, ref string, choice interp.Choice, from, _ string) (*Decided, error) {
	id := ref
	if v, err := c.resolveSlash(ctx, ref); err != nil {
		return nil, err
	} else if v != "" {
		id = v
	}
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodPost, runPath(id, "/decision"), nil, struct {
		Choose string `json:"choose"`
		From   string `json:"from,omitempty"`
	}{string(choice), from}, &raw); err != nil {
		return nil, err
	}
	d := &Decided{Run: &interp.RunView{}}
	var dec struct {
		Decision *DecisionJSON `json:"decision"`
	}
	if err := json.Unmarshal(raw, d.Run); err != nil {
		return nil, &ServerError{Server: c.Server(), Op: "POST " + runPath(id, "/decision"), Err: err}
	}
	if err := json.Unmarshal(raw, &dec); err != nil || dec.Decision == nil {
		return nil, &ServerError{Server: c.Server(), Op: "POST " + runPath(id, "/decision"), Err: fmt.Errorf("the answer has no decision member")}
	}
	d.DecisionJSON = *dec.Decision
	return d, nil
}

// resolveSlash is the id of a WORKFLOW/KEY reference, which no path
// segment can hold; "" for another reference.
func (c *Client) resolveSlash(ctx context.Context, ref string) (string, error) {
	if !containsSlash(ref) {
		return "", nil
	}
	v, err := c.Run(ctx, ref)
	if err != nil {
		return "", err
	}
	return v.RunID, nil
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}
