package interp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/flowrun/flowrun/internal/deepstack"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Alerts (semantics.md §14) go through an outbox. An occurrence queues one
// delivery per alert that lists its event, in the same commit that records
// the occurrence, so it is never lost and never queued twice. An alert loop
// of the process (Drive, Worker) claims due deliveries with a lease, runs
// the alert's action with a 30 s timeout and records the end: sent
// (alert_sent), or failed (alert_failed) and tried again with backoff up to
// alertTries times. A delivery recorded as sent is never sent again. The
// one window: a process that dies after the endpoint got the alert and
// before the commit that marks it sent leaves the delivery leased; after
// the lease it is sent again. The idempotency key (RUN/alert/NAME/ID, as
// FLOWRUN_IDEMPOTENCY_KEY or the Idempotency-Key header) is the same both
// times, so the endpoint can drop the copy. Alerts never change a run.

const (
	// alertTimeout bounds one delivery attempt.
	alertTimeout = 30 * time.Second
	// alertTries is how many times a delivery is tried before it is
	// recorded failed for good.
	alertTries = 5
	// alertBackoff is the delay before the second try; it doubles up to
	// alertMaxBackoff.
	alertBackoff    = time.Second
	alertMaxBackoff = 5 * time.Minute
	// alertBatch is how many deliveries one claim takes.
	alertBatch = 8
)

// alert queues the deliveries of an occurrence of event in the transition
// being built, one per alert whose on list names it.
func (sc *scheduler) alert(event, stepKey, message string) {
	for _, a := range sc.l.g.Alerts {
		if slices.Contains(a.On, event) {
			sc.tx.t.Alerts = append(sc.tx.t.Alerts, store.AlertWrite{Alert: a.Name, Event: event, StepKey: stepKey, Message: sc.red.text(message)})
		}
	}
}

// alertRunEnd queues the alerts of a run that ends failed: failed, and
// timed_out too when the deadline ended it.
func (sc *scheduler) alertRunEnd(se *stepError, step string) {
	if len(sc.l.g.Alerts) == 0 {
		return
	}
	if se.Kind == "deadline" {
		sc.alert("timed_out", "", se.Message)
	}
	sc.alert("failed", step, se.Message)
}

// alertLoop delivers the alerts of a pool's runs (all runs for a Worker,
// the tree for Drive) until stop is closed; then, unless ctx is done, it
// delivers what is due once more, so the alerts of a run's last commit go
// out before Drive returns. The caller waits for it on wg.
type alertLoop struct {
	e     *Engine
	owner string
	root  string
	wake  chan struct{}
}

// startAlerts starts the pool's alert loop; the returned function stops it
// and waits for it.
func (p *pool) startAlerts(ctx context.Context) func() {
	al := &alertLoop{e: p.e, owner: p.owner.String(), root: p.root, wake: make(chan struct{}, 1)}
	p.e.mu.Lock()
	p.e.alertLoops[al] = struct{}{}
	p.e.mu.Unlock()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The loop's store reads go deep (SQLite's parser and pager).
		deepstack.Grow()
		al.run(ctx, stop)
	}()
	return func() {
		close(stop)
		wg.Wait()
		p.e.mu.Lock()
		delete(p.e.alertLoops, al)
		p.e.mu.Unlock()
	}
}

// wakeAlerts tells the alert loops of this process that deliveries were
// just queued.
func (e *Engine) wakeAlerts() {
	e.mu.Lock()
	for al := range e.alertLoops {
		select {
		case al.wake <- struct{}{}:
		default:
		}
	}
	e.mu.Unlock()
}

func (al *alertLoop) run(ctx context.Context, stop <-chan struct{}) {
	sctx := context.WithoutCancel(ctx)
	for {
		al.deliverDue(sctx)
		wait := al.e.opts.Poll
		if next, ok, err := al.e.st.AlertNextDue(sctx, al.root); err == nil && ok {
			if d := next.Sub(al.e.clk.Now()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := al.e.clk.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			if ctx.Err() == nil {
				al.deliverDue(sctx)
			}
			return
		case <-al.wake:
		case <-t.C():
		}
		t.Stop()
	}
}

// deliverDue claims and delivers due deliveries until none is due. It
// looks first with a read, so an idle loop writes nothing.
func (al *alertLoop) deliverDue(ctx context.Context) {
	for {
		next, ok, err := al.e.st.AlertNextDue(ctx, al.root)
		if err != nil || !ok || next.After(al.e.clk.Now()) {
			return
		}
		ds, err := al.e.st.AlertClaim(ctx, store.AlertClaimParams{Owner: al.owner, Now: al.e.clk.Now(),
			LeaseFor: alertTimeout + al.e.opts.LeaseFor, Limit: alertBatch, RootRunID: al.root})
		if err != nil || len(ds) == 0 {
			return
		}
		for _, d := range ds { // in order of occurrence
			al.deliver(ctx, d)
		}
	}
}

// deliver runs one delivery attempt and records its end.
func (al *alertLoop) deliver(ctx context.Context, d store.AlertDelivery) {
	e := al.e
	errMsg := ""
	if err := e.sendAlert(ctx, d); err != nil {
		errMsg = err.Error()
	}
	now := e.clk.Now()
	p := store.AlertFinishParams{ID: d.ID, Owner: al.owner, Now: now, Status: store.AlertSent}
	data := map[string]any{"alert": d.Alert, "event": d.Event, "delivery": d.ID, "attempt": d.Attempts}
	kind := "alert_sent"
	if errMsg != "" {
		kind = "alert_failed"
		data["message"] = errMsg
		p.LastError = errMsg
		if d.Attempts < alertTries {
			delay := min(alertBackoff<<(d.Attempts-1), alertMaxBackoff)
			p.Status, p.NextAt = store.AlertPending, now.Add(delay)
			data["retry_at"] = p.NextAt.UTC().Format(time.RFC3339Nano)
		} else {
			p.Status = store.AlertFailed
			data["final"] = true
		}
	}
	ev := store.EventWrite{Kind: kind, StepKey: d.StepKey, Data: mustJSON(data)}
	p.Events = []store.EventWrite{ev}
	// A lost lease (this attempt took longer than the lease and another
	// process took the delivery over) leaves the record to that process.
	if e.st.AlertFinish(ctx, p) != nil {
		return
	}
	// The event is told as a commit's events are (OnEvent): a worker logs
	// it, apply shows it, as for any event of the run.
	if e.opts.OnEvent != nil {
		e.opts.OnEvent(store.Event{RunID: d.RunID, At: now, Kind: ev.Kind, StepKey: ev.StepKey, Data: ev.Data})
	}
}

// sendAlert evaluates an alert's action for its run and runs it once.
func (e *Engine) sendAlert(ctx context.Context, d store.AlertDelivery) error {
	run, err := e.st.RunGet(ctx, d.RunID)
	if err != nil {
		return fmt.Errorf("load run %s: %w", d.RunID, err)
	}
	r, err := e.viewRunner(ctx, run)
	if err != nil {
		return err
	}
	var al *graph.Alert
	for i := range r.l.g.Alerts {
		if r.l.g.Alerts[i].Name == d.Alert {
			al = &r.l.g.Alerts[i]
		}
	}
	if al == nil {
		return fmt.Errorf("the run's workflow has no alert %q", d.Alert)
	}
	a := r.sched.dataAct(nil)
	a.Event = map[string]any{"kind": d.Event, "message": d.Message, "step": d.StepKey}
	f := &flight{launch: &launch{started: e.clk.Now(), timeout: alertTimeout, limit: r.l.g.Limits.OutputBytes,
		idem: run.ID + "/alert/" + d.Alert + "/" + strconv.FormatInt(d.ID, 10)}, runID: run.ID, workflow: run.Workflow, alert: d.Alert}
	if f.limit <= 0 {
		f.limit = graph.DefaultOutputBytes
	}
	var se *stepError
	switch al.Action.Kind {
	case graph.KindExec:
		f.exec, se = r.sched.prepareExec(ctx, al.Action.Exec, a)
		if f.exec != nil {
			f.exec.env = append(f.exec.env, "FLOWRUN_IDEMPOTENCY_KEY="+f.idem, "FLOWRUN_RUN_ID="+run.ID,
				"FLOWRUN_ALERT="+d.Alert, "FLOWRUN_ALERT_EVENT="+d.Event)
		}
	case graph.KindHTTP:
		f.http, se = r.sched.prepareHTTP(ctx, al.Action.HTTP, a)
		if f.http != nil {
			f.http.idem = f.idem
		}
	default:
		return fmt.Errorf("alert %q has a %s action; alerts send with exec or http", d.Alert, al.Action.Kind)
	}
	if se != nil {
		return fmt.Errorf("%s", r.red.text(se.Message))
	}
	f.ctx, f.cancel = context.WithCancel(ctx)
	defer f.cancel()
	if res := f.do(e); res.err != nil {
		return fmt.Errorf("%s", r.red.text(res.err.Message))
	}
	return nil
}

// viewRunner returns a runner that only evaluates: the run's graph,
// inputs, secrets and the results of its settled steps, as rebuild loads
// them, without touching the run's state. Alerts and dead-letter retries
// evaluate their actions with it.
func (e *Engine) viewRunner(ctx context.Context, run store.Run) (*runner, error) {
	r := e.newRunner(run, "")
	l, err := e.load(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return nil, err
	}
	r.l = l
	r.inputs = decodeMap(run.Inputs)
	if r.inputs == nil {
		r.inputs = map[string]any{}
	}
	fillDefaults(l.g, r.inputs)
	r.secrets = secretValues(e.opts.Getenv, l.g.Secrets)
	r.red = newRedactor(r.secrets)
	started := run.StartedAt
	if started.IsZero() {
		started = run.CreatedAt
	}
	r.info = expr.RunInfo{ID: run.ID, Workflow: run.Workflow, Version: run.Version, Key: run.Key,
		Attempt: runAttempt(run), StartedAt: started.UTC().Format(time.RFC3339)}
	steps, err := e.st.StepList(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("run %s: load steps: %w", run.ID, err)
	}
	for i := range steps {
		s := steps[i]
		r.sched.setRow(&s)
		if ls := l.step(s.Key); ls != nil && s.Status.Terminal() {
			r.sched.settle(ls, &s)
		}
	}
	return r, nil
}
