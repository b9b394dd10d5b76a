package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// opsView is the operations page.
type opsView struct {
	DeadLetters []interp.DeadLetterJSON
	Breakers    []interp.BreakerJSON
	Schedules   []interp.ScheduleJSON
	Workers     []interp.WorkerJSON
	Live        int
	Queue       store.QueueStats
	// Waited is how long the oldest due run has waited ("" when none).
	Waited string
	Write  bool
	Done   string
}

func (h *Handler) opsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	v := opsView{Write: s.can(store.ScopeWrite), Done: h.doneText(r, s)}
	var err error
	if v.DeadLetters, err = h.opts.Door.DeadLetters(ctx, false); err != nil {
		return err
	}
	if v.Breakers, err = h.opts.Door.Breakers(ctx); err != nil {
		return err
	}
	if v.Schedules, err = h.opts.Door.Schedules(ctx); err != nil {
		return err
	}
	if v.Workers, err = h.opts.Door.Workers(ctx); err != nil {
		return err
	}
	if v.Live, err = h.opts.Door.LiveWorkers(ctx); err != nil {
		return err
	}
	if v.Queue, err = h.opts.Door.RunQueue(ctx); err != nil {
		return err
	}
	if !v.Queue.Oldest.IsZero() {
		v.Waited = h.clk.Now().Sub(v.Queue.Oldest).Round(time.Second).String()
	}
	h.render(w, http.StatusOK, "ops.html", view{Title: "Operations", Session: s, Nav: "ops", Data: v})
	return nil
}

func (h *Handler) workflowsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	wfs, err := h.opts.Door.Workflows(r.Context())
	if err != nil {
		return err
	}
	h.render(w, http.StatusOK, "workflows.html", view{Title: "Workflows", Session: s, Nav: "workflows", Data: wfs})
	return nil
}

// workflowView is a workflow's page: its versions, and the changes from
// one to another (from and to, the two newest by default).
type workflowView struct {
	Name     string
	Versions []interp.VersionJSON
	From, To string
	Changes  []graph.Change
	Bump     graph.Bump
	Layers   []graph.Layer
	// Webhooks are the paths of the newest graph's webhooks.
	Webhooks []string
	// Schedules are the workflow's active schedules.
	Schedules []interp.ScheduleJSON
	Write     bool
	// SourceName and Source are the file To was applied from,
	// highlighted; NoSource says why there is none.
	SourceName string
	Source     []span
	NoSource   string
}

func (h *Handler) workflowPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	name := r.PathValue("name")
	vs, err := h.opts.Door.Versions(ctx, name)
	if err != nil {
		return err
	}
	v := workflowView{Name: name, Versions: vs, Write: s.can(store.ScopeWrite)}
	all, err := h.opts.Door.Schedules(ctx)
	if err != nil {
		return err
	}
	for _, sc := range all {
		if sc.Workflow == name {
			v.Schedules = append(v.Schedules, sc)
		}
	}
	heads, err := h.opts.Door.VersionHeads(ctx, name)
	if err != nil {
		return err
	}
	hash := map[string]string{}
	for _, hd := range heads {
		hash[hd.Version] = hd.Hash
	}
	q := r.URL.Query()
	v.To = q.Get("to")
	if pv := r.PathValue("version"); pv != "" {
		v.To = pv
	}
	if v.To == "" && len(vs) > 0 {
		v.To = vs[len(vs)-1].Version
	}
	v.From = q.Get("from")
	if v.From == "" && len(vs) > 1 {
		v.From = vs[len(vs)-2].Version
	}
	to, err := h.versionGraph(r, name, v.To, hash)
	if err != nil {
		return err
	}
	if hh := hash[v.To]; hh != "" {
		sn, src, err := h.opts.Door.VersionSource(ctx, name, hh)
		switch {
		case errors.Is(err, store.ErrNotFound):
			v.NoSource = "This version was stored without its file (by a flowrun older than the dashboard, or not from a file)."
		case err != nil:
			return err
		default:
			v.SourceName, v.Source = sn, highlight(src)
		}
	}
	if to != nil {
		v.Layers = graph.Layers(to)
		for _, wh := range to.Webhooks {
			v.Webhooks = append(v.Webhooks, "/hooks/"+name+"/"+wh.Name)
		}
	}
	if v.From != "" && to != nil {
		from, err := h.versionGraph(r, name, v.From, hash)
		if err != nil {
			return err
		}
		if from != nil {
			v.Changes = graph.Diff(from, to)
			v.Bump = graph.RequiredBump(v.Changes)
		}
	}
	h.render(w, http.StatusOK, "workflow.html", view{Title: "Workflow " + name, Session: s, Nav: "workflows", Data: v})
	return nil
}

// versionGraph reads a stored version's graph; nil for "".
func (h *Handler) versionGraph(r *http.Request, workflow, version string, hash map[string]string) (*graph.Graph, error) {
	if version == "" {
		return nil, nil
	}
	hh, ok := hash[version]
	if !ok {
		return nil, &api.Refusal{Status: http.StatusNotFound, Message: "Workflow " + workflow + " has no stored version " + version + "."}
	}
	return h.opts.Door.Graph(r.Context(), workflow, hh)
}

// tokensView is the tokens page (scope admin).
type tokensView struct {
	Tokens []api.TokenJSON
	// Created is a token just created, shown this once.
	Created string
	Done    string
}

func (h *Handler) tokensPage(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeAdmin, "managing tokens"); err != nil {
		return err
	}
	ts, err := h.opts.Door.Tokens(r.Context())
	if err != nil {
		return err
	}
	h.render(w, http.StatusOK, "tokens.html", view{Title: "Tokens", Session: s, Nav: "ops", Data: tokensView{Tokens: ts, Done: h.doneText(r, s)}})
	return nil
}

// createToken creates a token and shows it on the answer, once: never in
// a URL (a redirect would put it in one) or a log.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeAdmin, "creating a token"); err != nil {
		return err
	}
	name, scope := strings.TrimSpace(r.PostFormValue("name")), store.TokenScope(r.PostFormValue("scope"))
	created, err := h.opts.Door.CreateToken(r.Context(), name, scope)
	if err != nil {
		return err
	}
	ts, err := h.opts.Door.Tokens(r.Context())
	if err != nil {
		return err
	}
	h.render(w, http.StatusOK, "tokens.html", view{Title: "Tokens", Session: s, Nav: "ops",
		Data: tokensView{Tokens: ts, Created: created.Token, Done: "Token " + created.Name + " created, with scope " + created.Scope + ". Copy it now: it is shown only this once."}})
	return nil
}

// revokeConfirm asks to revoke a token.
func (h *Handler) revokeConfirm(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeAdmin, "revoking a token"); err != nil {
		return err
	}
	name := r.PathValue("name")
	ts, err := h.opts.Door.Tokens(r.Context())
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ts, func(t api.TokenJSON) bool { return t.Name == name })
	if i < 0 {
		h.notFound(w, r, "There is no token "+name+".")
		return nil
	}
	h.confirm(w, s, "ops", confirmView{Post: "/ops/tokens/" + url.PathEscape(name) + "/revoke", Back: "/ops/tokens", Button: "revoke",
		Question: "Revoke token " + name + "?",
		Detail:   "Token " + name + " (scope " + ts[i].Scope + ") stops working at once, and the sessions signed in with it end at their next request. This cannot be undone."})
	return nil
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeAdmin, "revoking a token"); err != nil {
		return err
	}
	t, err := h.opts.Door.RevokeToken(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	http.Redirect(w, r, h.doneURL(s, "/ops/tokens", "Token "+t.Name+" revoked."), http.StatusSeeOther)
	return nil
}
