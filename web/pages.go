package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// runsPageSize is how many runs a page of the list shows.
const runsPageSize = 50

// statuses are the run statuses the list filters by, in their order.
var statuses = []string{"pending", "running", "waiting", "blocked", "completed", "failed", "canceled"}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if h.opts.NoAuth {
		http.Redirect(w, r, "/runs", http.StatusSeeOther)
		return
	}
	msg := ""
	if r.URL.Query().Get("ended") == "revoked" {
		// The server's own words for a fixed reason: a link carries
		// no text of its own to the page.
		msg = "Your session ended: the token you signed in with was revoked. Sign in with another token."
	}
	h.showLogin(w, r, http.StatusOK, msg)
}

type loginView struct {
	CSRF, Next, Error string
}

// Scopes are the scopes a token is created with, as the sign-in page's
// command line lists them (read|write|deploy|admin).
func (loginView) Scopes() string {
	names := make([]string, len(store.Scopes))
	for i, sc := range store.Scopes {
		names[i] = string(sc)
	}
	return strings.Join(names, "|")
}

func (h *Handler) showLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := randomHex(16)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: "/login", HttpOnly: true, Secure: h.opts.TLS, SameSite: http.SameSiteStrictMode})
	h.render(w, status, "login.html", view{Title: "Sign in", Data: loginView{CSRF: tok, Next: safeNext(r.FormValue("next")), Error: msg}})
}

// safeNext is a path of this site to go to after sign-in, or /runs. A
// browser reads a URL with its tabs and line breaks dropped and a
// backslash as a slash, so "/<TAB>/host" and "/\host" are "//host", another
// site: a next with any control character or backslash is refused, as is
// one that starts with "//".
func safeNext(next string) string {
	bad := strings.IndexFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) >= 0
	if bad || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/runs"
	}
	return next
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.showLogin(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || r.PostFormValue("csrf") != c.Value {
		h.showLogin(w, r, http.StatusForbidden, "The sign-in form expired or did not come from this page; try again.")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		h.showLogin(w, r, http.StatusBadRequest, "Paste a token (flowrun tokens create NAME prints one).")
		return
	}
	if _, err := h.signIn(w, r, token); err != nil {
		h.showLogin(w, r, http.StatusUnauthorized, err.Error())
		return
	}
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if s, err := h.current(w, r); err == nil {
		if err := r.ParseForm(); err != nil || !csrfOK(s, r) {
			h.fail(w, r, s, http.StatusForbidden, "The form's CSRF token is missing or wrong; you are still signed in.")
			return
		}
	}
	h.signOut(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// runsView is the runs page.
type runsView struct {
	Workflow, Key, Since, Q string
	// From and To bound the runs' creation, as an <input
	// type=datetime-local> writes them, in UTC.
	From, To  string
	Status    map[string]bool
	Statuses  []string
	Workflows []string
	Runs      []interp.RunSummaryJSON
	// Next is the address of the next page (this page's query with the
	// cursor), "" on the last. It is the whole URL, which html/template
	// keeps as it is: a query put after "?" in the template would be
	// escaped as one value ("before%3dID"), a link to the first page.
	Next   string
	Cursor int64
	Now    time.Time
}

func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	q := r.URL.Query()
	v := runsView{Workflow: q.Get("workflow"), Key: q.Get("key"), Since: q.Get("since"), Q: strings.TrimSpace(q.Get("q")), From: q.Get("from"), To: q.Get("to"),
		Status: map[string]bool{}, Statuses: statuses, Now: h.clk.Now()}
	rq := api.RunsQuery{Workflow: v.Workflow, Key: v.Key, Limit: runsPageSize + 1, Before: q.Get("before")}
	for _, st := range q["status"] {
		if !slices.Contains(statuses, st) {
			h.fail(w, r, s, http.StatusBadRequest, "Status "+st+" is not one of "+strings.Join(statuses, ", ")+".")
			return nil
		}
		v.Status[st] = true
		rq.Statuses = append(rq.Statuses, store.RunStatus(st))
	}
	if v.Since != "" {
		d, err := time.ParseDuration(v.Since)
		if err != nil || d <= 0 {
			h.fail(w, r, s, http.StatusBadRequest, "Since "+v.Since+" is not a duration such as 30m, 24h or 168h.")
			return nil
		}
		rq.Since = h.clk.Now().Add(-d)
	}
	for _, bound := range []struct {
		name, text string
		into       *time.Time
	}{{"From", v.From, &rq.Since}, {"To", v.To, &rq.Until}} {
		if bound.text == "" {
			continue
		}
		t, err := time.Parse("2006-01-02T15:04", bound.text)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, bound.text); err != nil {
				h.fail(w, r, s, http.StatusBadRequest, bound.name+" "+bound.text+" is not a time such as 2026-12-05T09:00 (UTC).")
				return nil
			}
		}
		if bound.name == "From" && !rq.Since.IsZero() && rq.Since.After(t) {
			continue // since is the later bound
		}
		*bound.into = t.UTC()
	}
	if v.Q != "" {
		// A run reference of the CLI (an id or a prefix, @last,
		// WORKFLOW@last, WORKFLOW/KEY) opens that run; any other text
		// lists the runs whose id, key or error holds it.
		view, err := h.opts.Door.Run(ctx, v.Q)
		var re *interp.RunRefError
		switch {
		case err == nil:
			http.Redirect(w, r, "/runs/"+url.PathEscape(view.RunID), http.StatusSeeOther)
			return nil
		case errors.As(err, &re):
			rq.Text = v.Q
		default:
			return err
		}
	}
	// The live cursor is read before the runs (as runPage's).
	cursor, err := api.LastEventID(ctx, h.opts.Door)
	if err != nil {
		return err
	}
	v.Cursor = cursor
	runs, err := h.opts.Door.Runs(ctx, rq)
	if err != nil {
		return err
	}
	if len(runs) > runsPageSize {
		runs = runs[:runsPageSize]
		next := r.URL.Query()
		next.Set("before", runs[len(runs)-1].RunID)
		next.Del("rows")
		v.Next = "/runs?" + next.Encode()
	}
	v.Runs = runs
	if r.URL.Query().Get("rows") == "1" {
		h.render(w, http.StatusOK, "runs_rows", view{Session: s, Data: v})
		return nil
	}
	wfs, err := h.opts.Door.Workflows(ctx)
	if err != nil {
		return err
	}
	for _, wf := range wfs {
		v.Workflows = append(v.Workflows, wf.Workflow)
	}
	h.render(w, http.StatusOK, "runs.html", view{Title: "Runs", Session: s, Nav: "runs", Data: v})
	return nil
}

// runView is a run's page.
type runView struct {
	Run      *interp.RunView
	Layers   []layerView
	Steps    []stepRow
	Events   []store.Event
	Signals  []signalForm
	Offer    interp.DecisionOffer
	Plan     *interp.DecisionPlan
	Children []string
	Cursor   int64
	Write    bool
	Done     string
	GraphErr string
	// StepCount steps in all; Shown of them are drawn (at most
	// maxDrawn), Hidden says some are not.
	StepCount, Shown int
	Hidden           bool
	// StepsFrom is the index of the first step row shown, StepsMore the
	// index of the next page's (0: none).
	StepsFrom, StepsMore int
	// Before and After are the run's graph and the newest version's,
	// side by side in a version decision, the changed steps marked.
	Before, After []layerView
}

// stepsPage is how many step rows a run's page lists at once.
const stepsPage = 500

// maxDrawn is the most steps a run's graph draws: a page of a graph of
// thousands of steps stays quick to load and draw; the table lists all.
const maxDrawn = 400

type layerView struct {
	Steps []layerStep
}

type layerStep struct {
	Name, Status, Label string
	Waits               []string
}

type stepRow struct {
	Name string
	*interp.StepView
}

// signalForm is a signal a waiting step of the run takes: its name, its
// declared type (or any) and an example payload of it. A type the page can
// ask field by field has a form of its own: an object of strings,
// numbers and booleans one input per field (Fields), a string, number or
// boolean one input (Scalar); any other is written as JSON (Example).
type signalForm struct {
	Name, Type, Example string
	Fields              []formField
	Scalar              string
}

// formField is one input of a signal's form: its name and its kind
// (string, number, int or bool).
type formField struct {
	Name, Kind string
}

// scalarKind reports whether t is asked with one input, and its kind.
func scalarKind(t *graph.Type) (string, bool) {
	switch t.Kind {
	case graph.KindString, graph.KindNumber, graph.KindInt, graph.KindBool:
		return string(t.Kind), true
	}
	return "", false
}

// formOf fills f's inputs from its declared type.
func formOf(f *signalForm, t *graph.Type) {
	if k, ok := scalarKind(t); ok {
		f.Scalar = k
		return
	}
	if t.Kind != graph.KindObject || len(t.Fields) == 0 {
		return
	}
	var fields []formField
	for name, ft := range t.Fields {
		k, ok := scalarKind(ft)
		if !ok {
			return // a nested value: the payload is written as JSON
		}
		fields = append(fields, formField{Name: name, Kind: k})
	}
	slices.SortFunc(fields, func(a, b formField) int { return strings.Compare(a.Name, b.Name) })
	f.Fields = fields
}

// maxEventsShown bounds the history on a run's page.
const maxEventsShown = 500

// itemPager is what a door in this process (api.Local) also offers: a
// run's view with its foreach items folded into totals, and a page of one
// step's items, so a step of 100,000 items is never read whole for a page.
type itemPager interface {
	RunFolded(ctx context.Context, ref string, maxFailed int) (*interp.RunView, error)
	RunItems(ctx context.Context, ref, step string, from, limit int) ([]interp.ItemView, error)
}

// runView reads a run for a page: folded when the door can.
func (h *Handler) readRun(ctx context.Context, ref string) (*interp.RunView, error) {
	if p, ok := h.opts.Door.(itemPager); ok {
		return p.RunFolded(ctx, ref, 0)
	}
	return h.opts.Door.Run(ctx, ref)
}

func (h *Handler) runPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	id := r.PathValue("id")
	// The live cursor is read before the run: a change made while the page
	// is read is told to the page again, never lost.
	cursor, err := api.LastEventID(ctx, h.opts.Door)
	if err != nil {
		return err
	}
	v, err := h.readRun(ctx, id)
	if err != nil {
		return err
	}
	rec, err := h.opts.Door.RunGet(ctx, v.RunID)
	if err != nil {
		return err
	}
	rv := runView{Run: v, Write: s.can(store.ScopeWrite), Done: h.doneText(r, s), Cursor: cursor}
	g, gerr := h.opts.Door.Graph(ctx, rec.Workflow, rec.GraphHash)
	if gerr != nil {
		rv.GraphErr = gerr.Error()
	}
	status := func(name string) string {
		if st := v.Steps[name]; st != nil {
			return string(st.Status)
		}
		return "pending"
	}
	if g != nil {
		rv.StepCount = len(g.Steps)
		for _, l := range graph.Layers(g) {
			if rv.Shown >= maxDrawn {
				rv.Hidden = true
				break
			}
			var lv layerView
			for _, st := range l.Steps {
				if rv.Shown >= maxDrawn {
					rv.Hidden = true
					break
				}
				rv.Shown++
				lv.Steps = append(lv.Steps, layerStep{Name: st.Name, Status: status(st.Name), Label: strings.Join(st.Label[1:], " "), Waits: st.Waits})
			}
			rv.Layers = append(rv.Layers, lv)
		}
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("steps"))
	from = max(0, min(from, len(v.Order)))
	rv.StepsFrom = from
	for i, name := range v.Order {
		if i < from || i >= from+stepsPage {
			if sv := v.Steps[name]; sv != nil && sv.ChildRunID != "" {
				rv.Children = append(rv.Children, sv.ChildRunID)
			}
			if i >= from+stepsPage {
				rv.StepsMore = from + stepsPage
			}
			continue
		}
		sv := v.Steps[name]
		if sv == nil {
			sv = &interp.StepView{Status: store.StepPending}
		}
		rv.Steps = append(rv.Steps, stepRow{Name: name, StepView: sv})
		if sv.ChildRunID != "" {
			rv.Children = append(rv.Children, sv.ChildRunID)
		}
	}
	evs, err := h.opts.Door.EventList(ctx, store.EventListParams{RunID: v.RunID})
	if err != nil {
		return err
	}
	if len(evs) > maxEventsShown {
		evs = evs[len(evs)-maxEventsShown:]
	}
	rv.Events = evs
	if !v.Status.Terminal() && g != nil {
		for _, st := range g.Steps {
			wa := st.Action.Wait
			if st.Action.Kind != graph.KindWait || wa == nil || wa.Signal == "" {
				continue
			}
			if sv := v.Steps[st.Name]; sv != nil && sv.Status.Terminal() {
				continue
			}
			f := signalForm{Name: wa.Signal, Type: "any", Example: "{}"}
			if t, ex, ok := interp.SignalExample(g, wa.Signal); ok {
				f.Type, f.Example = t.String(), string(ex)
				formOf(&f, t)
			}
			rv.Signals = append(rv.Signals, f)
		}
	}
	if rv.Offer, err = h.opts.Door.Offer(ctx, v.RunID); err != nil {
		return err
	}
	if rv.Offer.Offer {
		if rv.Plan, err = h.opts.Door.PlanDecision(ctx, v.RunID); err != nil {
			return err
		}
		changed := map[string]bool{}
		for _, c := range rv.Plan.Changes {
			if name, ok := strings.CutPrefix(c.Path, "step "); ok {
				changed[strings.Trim(name, `"`)] = true
			}
		}
		if g != nil {
			rv.Before = sideLayers(g, changed)
		}
		heads, err := h.opts.Door.VersionHeads(ctx, v.Workflow)
		if err != nil {
			return err
		}
		for _, hd := range heads {
			if hd.Version == rv.Plan.To {
				if ng, err := h.opts.Door.Graph(ctx, v.Workflow, hd.Hash); err == nil {
					rv.After = sideLayers(ng, changed)
				}
			}
		}
	}
	h.render(w, http.StatusOK, "run.html", view{Title: "Run " + v.RunID, Session: s, Nav: "runs", Data: rv})
	return nil
}

// stepView is a step's page.
type stepView struct {
	Run      *interp.RunView
	Key      string
	Step     *interp.StepView
	Attempts []store.Attempt
	// Items are the foreach items shown (at most maxItemsShown, from
	// index ItemsFrom; ItemsMore is the next page's first, 0 for none).
	Items                []interp.ItemView
	ItemsTotal           int
	ItemsDone            int
	ItemsFrom, ItemsMore int
}

const maxItemsShown = 200

func (h *Handler) stepPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	v, err := h.readRun(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	name, _, _, ok := store.ParseStepKey(key)
	sv := v.Steps[name]
	if !ok || (sv == nil && !slices.Contains(v.Order, name)) {
		h.notFound(w, r, "Run "+v.RunID+" has no step "+key+"; its steps are "+strings.Join(v.Order, ", ")+".")
		return nil
	}
	if sv == nil {
		sv = &interp.StepView{Status: store.StepPending}
	}
	sp := stepView{Run: v, Key: key, Step: sv, ItemsTotal: len(sv.Items)}
	if sp.Attempts, err = h.opts.Door.AttemptList(ctx, v.RunID, key); err != nil {
		return err
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("items"))
	sp.ItemsFrom = max(from, 0)
	if f := sv.Fold; f != nil {
		// A folded view: the totals, and a page of items read alone.
		sp.ItemsTotal = f.Total()
		for st, n := range f.Counts {
			if st.Terminal() {
				sp.ItemsDone += n
			}
		}
		if p, ok := h.opts.Door.(itemPager); ok && sp.ItemsTotal > 0 {
			if sp.Items, err = p.RunItems(ctx, v.RunID, name, sp.ItemsFrom, maxItemsShown+1); err != nil {
				return err
			}
		}
	} else {
		for _, it := range sv.Items {
			if it.Status.Terminal() {
				sp.ItemsDone++
			}
			if it.Index >= sp.ItemsFrom && len(sp.Items) <= maxItemsShown {
				sp.Items = append(sp.Items, it)
			}
		}
	}
	if len(sp.Items) > maxItemsShown {
		sp.Items = sp.Items[:maxItemsShown]
		sp.ItemsMore = sp.Items[len(sp.Items)-1].Index + 1
	}
	h.render(w, http.StatusOK, "step.html", view{Title: "Step " + key + " of run " + v.RunID, Session: s, Nav: "runs", Data: sp})
	return nil
}

// sideLayers lays g out for a decision's side-by-side view: each step's
// Status is "changed" when the decision's changes name it.
func sideLayers(g *graph.Graph, changed map[string]bool) []layerView {
	var out []layerView
	n := 0
	for _, l := range graph.Layers(g) {
		var lv layerView
		for _, st := range l.Steps {
			if n++; n > maxDrawn {
				return out
			}
			status := "same"
			if changed[st.Name] {
				status = "changed"
			}
			lv.Steps = append(lv.Steps, layerStep{Name: st.Name, Status: status, Label: strings.Join(st.Label[1:], " "), Waits: st.Waits})
		}
		out = append(out, lv)
	}
	return out
}
