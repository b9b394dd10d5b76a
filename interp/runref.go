package interp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/store"
)

// A run reference names one run wherever a command takes RUN
// (spec/cli.md §1): a full run id or a unique prefix of one, "@last"
// (the newest run), "WORKFLOW@last" (the newest run of a workflow), or
// "WORKFLOW/KEY" (the newest run of a workflow with that key). ResolveRun
// turns one into the run; every front end (the CLI, the HTTP server, the
// TUI's jump) resolves through it, so they all accept the same forms.

// RunRefKind is the form of a run reference.
type RunRefKind int

// The forms of a run reference.
const (
	// RefID is a full run id or a prefix of one.
	RefID RunRefKind = iota
	// RefLast is "@last": the newest run of the store.
	RefLast
	// RefWorkflowLast is "WORKFLOW@last": the newest run of a workflow.
	RefWorkflowLast
	// RefWorkflowKey is "WORKFLOW/KEY": the newest run of a workflow with
	// the key.
	RefWorkflowKey
)

// RunRef is a parsed run reference.
type RunRef struct {
	Kind RunRefKind
	// Text is the reference as given.
	Text string
	// ID is the id or prefix as given (RefID).
	ID string
	// Workflow (RefWorkflowLast, RefWorkflowKey) and Key (RefWorkflowKey).
	Workflow, Key string
}

// RunRefProblem says why a reference names no single run.
type RunRefProblem int

// The problems of a run reference.
const (
	// RefInvalid: the text is no run reference at all (empty, "@first",
	// "WORKFLOW/" with no key).
	RefInvalid RunRefProblem = iota + 1
	// RefNoMatch: no run matches.
	RefNoMatch
	// RefAmbiguous: an id prefix matches more than one run.
	RefAmbiguous
)

// ErrInvalidRunRef is wrapped by the RunRefError of a text that is no run
// reference.
var ErrInvalidRunRef = errors.New("invalid run reference")

// RunRefError is the error of a run reference that names no single run.
// It wraps store.ErrNotFound (RefNoMatch), store.ErrAmbiguous
// (RefAmbiguous) or ErrInvalidRunRef (RefInvalid).
type RunRefError struct {
	Ref     string
	Problem RunRefProblem
	// Message says what is wrong, naming the reference as given.
	Message string
	// Candidates are runs, newest first: for RefAmbiguous those the prefix
	// matches (at most MaxRefCandidates; More says there are others), for
	// RefNoMatch the nearest (the ids sharing the longest prefix with it,
	// or the runs of the keys nearest to it).
	Candidates []store.RunSummary
	More       bool
	// Workflows are stored workflow names: for a reference to a workflow
	// that has none, the nearest names; for an id that matches nothing
	// but is the name of a workflow, that name.
	Workflows []string
}

// MaxRefCandidates is how many candidates a RunRefError lists at most.
const MaxRefCandidates = 10

func (e *RunRefError) Error() string {
	msg := e.Message
	if len(e.Candidates) > 0 {
		ids := make([]string, len(e.Candidates))
		for i, c := range e.Candidates {
			ids[i] = c.ID
		}
		msg += " (" + strings.Join(ids, ", ")
		if e.More {
			msg += ", ..."
		}
		msg += ")"
	}
	return msg
}

func (e *RunRefError) Unwrap() error {
	switch e.Problem {
	case RefAmbiguous:
		return store.ErrAmbiguous
	case RefNoMatch:
		return store.ErrNotFound
	}
	return ErrInvalidRunRef
}

// ParseRunRef parses a run reference. It reads no store: a text that is
// not one of the forms is a *RunRefError with RefInvalid.
func ParseRunRef(text string) (RunRef, error) {
	bad := func(format string, args ...any) (RunRef, error) {
		return RunRef{}, &RunRefError{Ref: text, Problem: RefInvalid, Message: fmt.Sprintf(format, args...)}
	}
	if text == "" {
		return bad("the run reference is empty")
	}
	// Run ids are base32 and workflow names identifiers: the first "/"
	// ends the workflow name, and a key may hold anything after it.
	if wf, key, ok := strings.Cut(text, "/"); ok {
		switch {
		case wf == "":
			return bad("%q names no workflow before the /", text)
		case key == "":
			return bad("%q names no key after the /", text)
		case !naming.ValidWorkflowName(wf):
			return bad("%q: %q is not a workflow name", text, wf)
		}
		return RunRef{Kind: RefWorkflowKey, Text: text, Workflow: wf, Key: key}, nil
	}
	if wf, what, ok := strings.Cut(text, "@"); ok {
		switch {
		case what != "last":
			return bad("%q: the only @ reference is @last", text)
		case wf == "":
			return RunRef{Kind: RefLast, Text: text}, nil
		case !naming.ValidWorkflowName(wf):
			return bad("%q: %q is not a workflow name", text, wf)
		}
		return RunRef{Kind: RefWorkflowLast, Text: text, Workflow: wf}, nil
	}
	return RunRef{Kind: RefID, Text: text, ID: text}, nil
}

// ResolveRun returns the run a reference names (ParseRunRef). An id or
// prefix is read as Crockford base32, as ULIDs are: in any case, with I
// and L for 1 and O for 0; a full id wins over a longer id it is a prefix
// of. A reference that names no run, or more than one, is a *RunRefError
// that lists the candidates.
func (e *Engine) ResolveRun(ctx context.Context, text string) (store.Run, error) {
	ref, err := ParseRunRef(text)
	if err != nil {
		return store.Run{}, err
	}
	switch ref.Kind {
	case RefLast, RefWorkflowLast:
		return e.resolveLast(ctx, ref)
	case RefWorkflowKey:
		return e.resolveKey(ctx, ref)
	}
	return e.resolveID(ctx, ref)
}

func (e *Engine) resolveID(ctx context.Context, ref RunRef) (store.Run, error) {
	run, err := e.st.RunFind(ctx, ref.ID)
	canon := CanonicalRunID(ref.ID)
	prefix := ref.ID
	if errors.Is(err, store.ErrNotFound) && canon != ref.ID {
		run, err = e.st.RunFind(ctx, canon)
		prefix = canon
	}
	switch {
	case err == nil:
		return run, nil
	case errors.Is(err, store.ErrAmbiguous):
		rs, err := e.st.RunList(ctx, store.RunListParams{IDPrefix: prefix, Limit: MaxRefCandidates + 1})
		if err != nil {
			return store.Run{}, fmt.Errorf("run %q: listing the runs it matches: %w", ref.Text, err)
		}
		more := len(rs) > MaxRefCandidates
		if more {
			rs = rs[:MaxRefCandidates]
		}
		return store.Run{}, &RunRefError{Ref: ref.Text, Problem: RefAmbiguous, Candidates: rs, More: more,
			Message: fmt.Sprintf("%q is the start of more than one run id", ref.Text)}
	case !errors.Is(err, store.ErrNotFound):
		return store.Run{}, fmt.Errorf("finding run %q: %w", ref.Text, err)
	}
	rerr := &RunRefError{Ref: ref.Text, Problem: RefNoMatch,
		Message: fmt.Sprintf("no run has an id starting with %q", ref.Text)}
	// The nearest: the runs whose ids share the longest prefix with it.
	near := canonicalLead(ref.ID)
	for n := min(len(near), 25); n > 0; n-- {
		rs, err := e.st.RunList(ctx, store.RunListParams{IDPrefix: near[:n], Limit: 5})
		if err != nil {
			return store.Run{}, fmt.Errorf("run %q: listing the nearest runs: %w", ref.Text, err)
		}
		if len(rs) > 0 {
			rerr.Candidates = rs
			break
		}
	}
	// A workflow's name given where a run is meant.
	names, err := e.workflowNames(ctx)
	if err != nil {
		return store.Run{}, fmt.Errorf("run %q: %w", ref.Text, err)
	}
	if naming.ContainsName(names, ref.ID) {
		rerr.Workflows = []string{ref.ID}
	}
	return store.Run{}, rerr
}

func (e *Engine) resolveLast(ctx context.Context, ref RunRef) (store.Run, error) {
	rs, err := e.st.RunList(ctx, store.RunListParams{Workflow: ref.Workflow, Limit: 1})
	if err != nil {
		return store.Run{}, fmt.Errorf("finding run %s: %w", ref.Text, err)
	}
	if len(rs) == 1 {
		run, err := e.st.RunGet(ctx, rs[0].ID)
		if err != nil {
			return store.Run{}, fmt.Errorf("finding run %s: %w", ref.Text, err)
		}
		return run, nil
	}
	if ref.Kind == RefLast {
		return store.Run{}, &RunRefError{Ref: ref.Text, Problem: RefNoMatch,
			Message: "@last names the newest run, and there are no runs"}
	}
	return store.Run{}, e.noWorkflowRun(ctx, ref, fmt.Sprintf("workflow %q has no runs", ref.Workflow))
}

func (e *Engine) resolveKey(ctx context.Context, ref RunRef) (store.Run, error) {
	run, err := e.st.RunGetByKey(ctx, ref.Workflow, ref.Key)
	if err == nil {
		return run, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.Run{}, fmt.Errorf("finding run %s: %w", ref.Text, err)
	}
	rerr := e.noWorkflowRun(ctx, ref, fmt.Sprintf("workflow %q has no run with key %q", ref.Workflow, ref.Key))
	var re *RunRefError
	if !errors.As(rerr, &re) || len(re.Workflows) > 0 {
		return store.Run{}, rerr
	}
	// The workflow has runs: list those of the keys nearest to the one
	// given (the newest run of each key; recent runs only).
	rs, err := e.st.RunList(ctx, store.RunListParams{Workflow: ref.Workflow, Limit: 1000})
	if err != nil {
		return store.Run{}, fmt.Errorf("run %s: listing the workflow's runs: %w", ref.Text, err)
	}
	seen := map[string]bool{}
	var byKey []store.RunSummary
	for _, r := range rs {
		if r.Key != "" && !seen[r.Key] {
			seen[r.Key] = true
			byKey = append(byKey, r)
		}
	}
	given := strings.ToLower(ref.Key)
	sort.SliceStable(byKey, func(i, j int) bool {
		return naming.EditDistance(given, strings.ToLower(byKey[i].Key)) < naming.EditDistance(given, strings.ToLower(byKey[j].Key))
	})
	re.Candidates = byKey[:min(len(byKey), 5)]
	return store.Run{}, re
}

// noWorkflowRun is the RefNoMatch error of a WORKFLOW@last or
// WORKFLOW/KEY reference, with msg; when the workflow is not stored at
// all, it says so and lists the nearest workflow names.
func (e *Engine) noWorkflowRun(ctx context.Context, ref RunRef, msg string) error {
	stored, nearest, err := e.NearestWorkflows(ctx, ref.Workflow)
	if err != nil {
		return fmt.Errorf("run %s: %w", ref.Text, err)
	}
	rerr := &RunRefError{Ref: ref.Text, Problem: RefNoMatch, Message: msg}
	if stored {
		return rerr
	}
	rerr.Message = fmt.Sprintf("no workflow %q is stored", ref.Workflow)
	rerr.Workflows = nearest
	return rerr
}

// NearestWorkflows says whether a workflow named name is stored and, when
// it is not, the names of up to 5 stored workflows nearest to it (edit
// distance, ignoring case), nearest first: for the messages of a
// misspelled workflow name.
func (e *Engine) NearestWorkflows(ctx context.Context, name string) (stored bool, nearest []string, err error) {
	names, err := e.workflowNames(ctx)
	if err != nil {
		return false, nil, err
	}
	stored, nearest = Nearest(name, names)
	return stored, nearest, nil
}

// Nearest says whether names holds name and, when it does not, the (up
// to 5) names nearest to it, nearest first (NearestWorkflows). It may
// reorder names.
func Nearest(name string, names []string) (found bool, nearest []string) {
	if naming.ContainsName(names, name) {
		return true, nil
	}
	sort.Strings(names)
	given := strings.ToLower(name)
	sort.SliceStable(names, func(i, j int) bool {
		return naming.EditDistance(given, strings.ToLower(names[i])) < naming.EditDistance(given, strings.ToLower(names[j]))
	})
	return false, names[:min(len(names), 5)]
}

// workflowNames lists the names of the stored workflows, sorted.
func (e *Engine) workflowNames(ctx context.Context) ([]string, error) {
	vs, err := e.st.VersionHeads(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("listing the stored workflows: %w", err)
	}
	var names []string
	seen := map[string]bool{}
	for _, v := range vs {
		if !seen[v.Workflow] {
			seen[v.Workflow] = true
			names = append(names, v.Workflow)
		}
	}
	sort.Strings(names)
	return names, nil
}

// CanonicalRunID is a run id (or a prefix) as a ULID writes it: Crockford
// base32 in upper case, with the letters people mistake for digits (I and
// L for 1, O for 0) read as those digits. A string that is not base32 is
// returned as it is.
func CanonicalRunID(s string) string {
	lead := canonicalLead(s)
	if len(lead) != len(s) {
		return s
	}
	return lead
}

// canonicalLead is the longest leading part of s that is Crockford
// base32, canonical (CanonicalRunID).
func canonicalLead(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		switch {
		case c == 'I' || c == 'L':
			c = '1'
		case c == 'O':
			c = '0'
		case c == 'U' || !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'):
			return string(b)
		}
		b = append(b, c)
	}
	return string(b)
}
