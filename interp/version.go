package interp

// Version binding of runs in flight: when a run is claimed (or found by
// apply or resume) its bound version is compared with the stored versions
// of its workflow. A newer PATCH of its MAJOR.MINOR moves it (event
// version_moved); a newer MAJOR blocks it (status blocked, event
// version_blocked) until a decision (decide.go); a newer MINOR lets it
// finish on its own graph. spec/versioning.md §4 states the rules.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Binding is what the binding check does to a run in flight, given the
// stored versions of its workflow.
type Binding struct {
	// Bound is the version the run is bound to now.
	Bound string
	// MoveTo is the newest PATCH of the run's MAJOR.MINOR above Bound (that
	// its pin accepts), the version the run moves to; "" when none.
	MoveTo string
	// Newest is the newest stored version the run considers (for a child,
	// the newest its pin accepts).
	Newest string
	// Block is set when Newest has a higher MAJOR and the run was not
	// decided "old" before: the run is blocked and nothing of it executes.
	Block bool
	// DecidedOld says the run was decided "old" before, so a newer MAJOR
	// no longer blocks it.
	DecidedOld bool
}

// Finishes reports whether a newer MINOR or MAJOR exists that the run will
// not move to: it finishes on its own MAJOR.MINOR.
func (b Binding) Finishes() bool {
	on := b.Bound
	if b.MoveTo != "" {
		on = b.MoveTo
	}
	return !b.Block && b.Newest != "" && b.Newest != on
}

// String says in words what happens to the run, for plan and logs.
func (b Binding) String() string {
	switch {
	case b.Block:
		return fmt.Sprintf("blocks: %s is a new MAJOR version; a decision is needed (old, new or migrate)", b.Newest)
	case b.MoveTo != "" && b.Finishes():
		return fmt.Sprintf("moves to %s, then finishes on it (%s is newer but not a PATCH of %s)", b.MoveTo, b.Newest, b.Bound)
	case b.MoveTo != "":
		return fmt.Sprintf("moves to %s (PATCH)", b.MoveTo)
	case b.Finishes() && b.DecidedOld:
		return fmt.Sprintf("finishes on %s (decided old; %s is newer)", b.Bound, b.Newest)
	case b.Finishes():
		return fmt.Sprintf("finishes on %s (%s is a newer MINOR)", b.Bound, b.Newest)
	}
	return "unchanged: no newer version applies"
}

// Bind computes the binding of a run bound to version bound, given the
// stored versions of its workflow (any order). pin restricts the versions
// considered ("" for a top-level run; a child's pin such as "1" or "1.2");
// decidedOld is whether the run was decided "old" before. The rules are
// spec/versioning.md §4: moves go to the newest PATCH of the bound
// MAJOR.MINOR; a higher MAJOR blocks unless decidedOld; a blocked run does
// not move.
func Bind(bound string, stored []string, pin string, decidedOld bool) (Binding, error) {
	b := Binding{Bound: bound, DecidedOld: decidedOld}
	cur, err := graph.ParseVersion(bound)
	if err != nil {
		return b, fmt.Errorf("the run's bound %w", err)
	}
	var p *graph.Pin
	if pin != "" {
		pp, err := graph.ParsePin(pin)
		if err != nil {
			return b, err
		}
		p = &pp
	}
	var newest, move *graph.SemVer
	for _, s := range stored {
		v, err := graph.ParseVersion(s)
		if err != nil {
			return b, fmt.Errorf("a stored %w", err)
		}
		if p != nil && !p.Matches(v) {
			continue
		}
		if newest == nil || v.Compare(*newest) > 0 {
			newest = &v
		}
		if v.Major == cur.Major && v.Minor == cur.Minor && v.Compare(cur) > 0 && (move == nil || v.Compare(*move) > 0) {
			move = &v
		}
	}
	if newest != nil && newest.Compare(cur) > 0 {
		b.Newest = newest.String()
		if newest.Major > cur.Major && !decidedOld {
			b.Block = true
			return b, nil
		}
	}
	if move != nil {
		b.MoveTo = move.String()
	}
	return b, nil
}

// binding computes the binding of a run against the stored versions, plus
// extra (a version about to be stored, for plan; "" for none).
func (e *Engine) binding(ctx context.Context, run store.Run, extra string) (Binding, error) {
	vs, err := e.st.VersionHeads(ctx, run.Workflow)
	if err != nil {
		return Binding{}, fmt.Errorf("run %s: list versions of workflow %q: %w", run.ID, run.Workflow, err)
	}
	stored := make([]string, 0, len(vs)+1)
	for _, v := range vs {
		stored = append(stored, v.Version)
	}
	if extra != "" {
		stored = append(stored, extra)
	}
	pin := ""
	if run.ParentRunID != "" {
		if pin, err = e.childPin(ctx, run); err != nil {
			return Binding{}, err
		}
	}
	b, err := Bind(run.Version, stored, pin, false)
	if err != nil || !b.Block {
		return b, err
	}
	if run.ParentRunID == "" && startedUnder(run, vs, extra) {
		// Started on its version knowingly (a pinned start, an apply of
		// an older file) while the newer MAJORs were stored already: they
		// are not news to it (spec/versioning.md §4).
		return Bind(run.Version, stored, pin, true)
	}
	old, err := e.decidedOld(ctx, run.ID)
	if err != nil || !old {
		return b, err
	}
	return Bind(run.Version, stored, pin, true)
}

// startedUnder reports whether every stored version of a newer MAJOR than
// run's was stored before the run was created (and extra, a version about
// to be stored and not stored yet, is not one): the run was started on its version with
// them in view, so they do not block it.
func startedUnder(run store.Run, vs []store.Version, extra string) bool {
	cur, err := graph.ParseVersion(run.Version)
	if err != nil || run.CreatedAt.IsZero() {
		return false
	}
	stored := false
	for _, v := range vs {
		stored = stored || v.Version == extra
	}
	if x, err := graph.ParseVersion(extra); err == nil && x.Major > cur.Major && !stored {
		return false
	}
	for _, v := range vs {
		if v.Major > cur.Major && !v.CreatedAt.Before(run.CreatedAt) {
			return false
		}
	}
	return true
}

// childPin returns the version pin of the parent step that started a
// child run. When the parent's graph no longer names it (it cannot be
// found), the child keeps to its own MAJOR: a child is never blocked.
func (e *Engine) childPin(ctx context.Context, run store.Run) (string, error) {
	own := strings.SplitN(run.Version, ".", 2)[0]
	parent, err := e.st.RunGet(ctx, run.ParentRunID)
	if errors.Is(err, store.ErrNotFound) {
		return own, nil
	}
	if err != nil {
		return "", fmt.Errorf("run %s: load parent run %s: %w", run.ID, run.ParentRunID, err)
	}
	l, err := e.load(ctx, parent.Workflow, parent.GraphHash)
	if err != nil {
		return "", fmt.Errorf("run %s: %w", run.ID, err)
	}
	name := run.ParentStepKey
	if i := strings.IndexAny(name, "[#"); i >= 0 {
		name = name[:i]
	}
	s := l.step(name)
	if s == nil || s.Action.Workflow == nil || s.Action.Workflow.Name != run.Workflow {
		return own, nil
	}
	return s.Action.Workflow.Version, nil
}

// decidedOld reports whether the run's history holds a version decision
// "old": such a run is not blocked again (spec/versioning.md §4). The
// history is read only when a newer MAJOR would block the run.
func (e *Engine) decidedOld(ctx context.Context, runID string) (bool, error) {
	evs, err := e.st.EventList(ctx, store.EventListParams{RunID: runID})
	if err != nil {
		return false, fmt.Errorf("run %s: read its history: %w", runID, err)
	}
	for _, ev := range evs {
		if ev.Kind != "version_decided" {
			continue
		}
		var d struct {
			Choice string `json:"choice"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Choice == string(ChoiceOld) {
			return true, nil
		}
	}
	return false, nil
}

// moveTarget reads the stored version a binding moves the run to (b.MoveTo;
// zero when it does not move): the one thing bindingWrite needs that the
// binding does not hold.
func (e *Engine) moveTarget(ctx context.Context, run store.Run, b Binding) (store.Version, error) {
	if b.Block || b.MoveTo == "" {
		return store.Version{}, nil
	}
	v, err := e.versionHead(ctx, run.Workflow, b.MoveTo)
	if err != nil {
		return v, fmt.Errorf("run %s: load version %s: %w", run.ID, b.MoveTo, err)
	}
	return v, nil
}

// bindingWrite fills a run update and events with what binding b does to
// run: blocked (released, wait reason version, event version_blocked), or
// moved to version to, which moveTarget read (event version_moved). It
// reports whether there was anything to write. It is pure: the binding
// was decided (Bind) and the target read before it, and the caller
// commits what it wrote.
func bindingWrite(run store.Run, b Binding, to store.Version, u *store.RunUpdate, event func(kind string, data any)) bool {
	switch {
	case b.Block:
		u.Status = ptr(store.RunBlocked)
		u.WaitReason = ptr("version")
		u.Release = true
		event("version_blocked", map[string]any{"from": run.Version, "to": b.Newest,
			"message": fmt.Sprintf("version %s of %q is stored, a new MAJOR version; decide with: flowrun resume %s --choose old|new|migrate", b.Newest, run.Workflow, run.ID)})
		return true
	case b.MoveTo != "":
		u.Version, u.GraphHash = ptr(to.Version), ptr(to.Hash)
		event("version_moved", map[string]any{"from": run.Version, "to": to.Version, "from_hash": run.GraphHash, "to_hash": to.Hash,
			"message": fmt.Sprintf("moved from %s to %s, a newer PATCH of the same MAJOR.MINOR", run.Version, to.Version)})
		return true
	}
	return false
}

// bindVersion is the binding check of a claimed run, before its state is
// rebuilt: it reads what the binding depends on (binding, moveTarget), has
// it decided (Bind) and written (bindingWrite), and carries it out. A
// move is written with the runner's first transition (the graph loaded is
// the new one); a block is committed at once and the runner returns with
// blocked true, having executed nothing.
func (r *runner) bindVersion(ctx context.Context) (blocked bool, err error) {
	if r.run.CancelRequested {
		return false, nil // the cancel wins: nothing to decide about a run that ends
	}
	b, err := r.e.binding(ctx, r.run, "")
	if err != nil {
		return false, err
	}
	to, err := r.e.moveTarget(ctx, r.run, b)
	if err != nil {
		return false, err
	}
	u := &store.RunUpdate{}
	if !bindingWrite(r.run, b, to, u, func(kind string, data any) { r.tx.event(kind, "", data) }) {
		return false, nil
	}
	ru := r.tx.runUpdate()
	ru.Status, ru.WaitReason, ru.Release, ru.Version, ru.GraphHash = u.Status, u.WaitReason, u.Release, u.Version, u.GraphHash
	if !b.Block {
		r.run.Version, r.run.GraphHash = to.Version, to.Hash
		return false, nil
	}
	r.now = r.e.clk.Now()
	if err := r.flush(ctx); err != nil {
		return true, err
	}
	return true, nil
}

// Rebind applies the binding check to a run nobody holds, as a worker's
// claim would: apply and resume call it on the run they found, so that a
// run parked on a signal is moved or blocked at once rather than at its
// next claim. A run a worker holds is left to that worker. It returns the
// run as stored afterwards.
func (e *Engine) Rebind(ctx context.Context, runID string) (store.Run, error) {
	run, err := e.st.RunGet(ctx, runID)
	if err != nil {
		return run, fmt.Errorf("check the version of run %s: %w", runID, err)
	}
	if run.Status.Terminal() || run.Status == store.RunBlocked || run.CancelRequested || run.Lease.Owner != "" {
		return run, nil
	}
	b, err := e.binding(ctx, run, "")
	if err != nil {
		return run, err
	}
	to, err := e.moveTarget(ctx, run, b)
	if err != nil {
		return run, err
	}
	t := store.Transition{RunID: run.ID, Run: &store.RunUpdate{}, Now: e.clk.Now()}
	if !bindingWrite(run, b, to, t.Run, func(kind string, data any) {
		t.Events = append(t.Events, store.EventWrite{Kind: kind, Data: mustJSON(data)})
	}) {
		return run, nil
	}
	if err := e.com.commit(ctx, t); err != nil && !isLeaseLost(err) {
		return run, fmt.Errorf("check the version of run %s: %w", runID, err)
	}
	run, err = e.st.RunGet(ctx, runID)
	if err != nil {
		return run, fmt.Errorf("check the version of run %s: %w", runID, err)
	}
	return run, nil
}

// PlanBinding says what the binding check would do to a run in flight if
// version extra were stored too ("" for the versions stored now), for
// `flowrun plan`.
func (e *Engine) PlanBinding(ctx context.Context, run store.Run, extra string) (Binding, error) {
	return e.binding(ctx, run, extra)
}

// fillDefaults adds the declared inputs a run's inputs lack that have a
// default: a run moved or migrated to a version with a new optional input
// reads its default.
func fillDefaults(g *graph.Graph, inputs map[string]any) {
	for _, in := range g.Inputs {
		if _, ok := inputs[in.Name]; ok || in.Default == nil {
			continue
		}
		var v any
		if graph.UnmarshalJSON(in.Default, &v) == nil {
			inputs[in.Name] = v
		}
	}
}

// sameRelease reports whether a completed run on version done stands for
// an apply of version want: it does unless want is a newer MAJOR.MINOR (a
// new MINOR or MAJOR changes what a run does, so it starts a new run; a
// PATCH does not).
func sameRelease(done, want string) bool {
	d, err1 := graph.ParseVersion(done)
	w, err2 := graph.ParseVersion(want)
	if err1 != nil || err2 != nil {
		return true
	}
	return w.Major < d.Major || (w.Major == d.Major && w.Minor <= d.Minor)
}
