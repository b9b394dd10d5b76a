package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// The actions on a run: each is asked on a page of its own (what it will
// do, a button that confirms), then carried out through the door by a
// POST with the session's CSRF token, and the run's page says what it
// did. A scope too small, a run in the wrong state or a value of the
// wrong type is refused with the door's words and nothing is done.

// A confirm page is refused, as its action is, to a session whose scope
// cannot act: it offers no button that would only be refused.

// confirmView is a confirm page: what an action will do, and the button
// that posts it (with the session's CSRF token) to Post.
type confirmView struct {
	Question, Detail string
	// Post is the action's address; Back the page to go back to; Button
	// the verb on the button ("Yes, cancel").
	Post, Back, Button string
	// Fields are the form's values, carried to the POST.
	Fields map[string]string
}

// confirm shows a confirm page.
func (h *Handler) confirm(w http.ResponseWriter, s *session, nav string, c confirmView) {
	h.render(w, http.StatusOK, "confirm.html", view{Title: c.Question, Session: s, Nav: nav, Data: c})
}

func (h *Handler) confirmPage(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeWrite, "acting on a run"); err != nil {
		return err
	}
	ctx := r.Context()
	v, err := h.opts.Door.Run(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	action := r.PathValue("action")
	c := confirmView{Post: "/runs/" + url.PathEscape(v.RunID) + "/" + url.PathEscape(action), Back: "/runs/" + url.PathEscape(v.RunID),
		Button: action, Fields: map[string]string{}}
	q := r.URL.Query()
	switch action {
	case "cancel":
		c.Question = "Cancel run " + v.RunID + "?"
		c.Detail = "The run and its child runs end canceled; a step that is running is stopped. This cannot be undone."
	case "retry":
		c.Question = "Retry run " + v.RunID + "?"
		c.Detail = "Completed steps are kept; the failed and canceled steps and what follows them run again."
		if from := q.Get("from"); from != "" {
			c.Fields["from"] = from
			c.Detail = "Step " + from + " and every step after it run again; the steps before it are kept."
		}
	case "signal":
		name, data := q.Get("name"), q.Get("data")
		if name == "" {
			h.fail(w, r, s, http.StatusBadRequest, "Name the signal to send.")
			return nil
		}
		if q.Get("mode") != "json" {
			var msg string
			if data, msg = formPayload(q); msg != "" {
				h.fail(w, r, s, http.StatusUnprocessableEntity, msg+" Nothing was sent; go back and fix it.")
				return nil
			}
		}
		if !json.Valid([]byte(data)) {
			h.fail(w, r, s, http.StatusBadRequest, fmt.Sprintf("The payload of signal %s is not valid JSON: %q. Go back and fix it.", name, data))
			return nil
		}
		c.Fields["name"], c.Fields["data"] = name, data
		c.Question = "Send signal " + name + " to run " + v.RunID + "?"
		c.Detail = "Payload: " + data
	case "decide":
		choice := q.Get("choose")
		if choice != "old" && choice != "new" && choice != "migrate" {
			h.fail(w, r, s, http.StatusBadRequest, "Choose old, new or migrate.")
			return nil
		}
		c.Fields["choose"], c.Fields["from"] = choice, q.Get("from")
		c.Question = fmt.Sprintf("Decide %q for run %s?", choice, v.RunID)
		switch choice {
		case "old":
			c.Detail = "The run goes on under the version it started on (" + v.Version + ")."
		case "new":
			c.Detail = "The run is canceled and a new run of the newest version starts with the same inputs."
		default:
			c.Detail = "The run moves to the newest version, keeping the completed steps that did not change."
		}
	default:
		h.notFound(w, r, "There is no action "+action+" on a run.")
		return nil
	}
	h.confirm(w, s, "runs", c)
	return nil
}

// runAction carries out a confirmed action on a run.
func (h *Handler) runAction(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	id, action := r.PathValue("id"), r.PathValue("action")
	if err := need(s, store.ScopeWrite, "acting on a run"); err != nil {
		return err
	}
	var done string
	switch action {
	case "cancel":
		v, err := h.opts.Door.Cancel(ctx, id)
		if err != nil {
			return err
		}
		id, done = v.RunID, "Cancel of run "+v.RunID+" requested."
	case "retry":
		v, err := h.opts.Door.Retry(ctx, id, r.PostFormValue("from"))
		if err != nil {
			return err
		}
		id, done = v.RunID, "Run "+v.RunID+" will be retried."
	case "signal":
		name := r.PostFormValue("name")
		v, err := h.opts.Door.Signal(ctx, id, name, json.RawMessage(r.PostFormValue("data")))
		if err != nil {
			return err
		}
		id, done = v.RunID, "Signal "+name+" sent to run "+v.RunID+"."
	case "decide":
		choice := interp.Choice(r.PostFormValue("choose"))
		d, err := h.opts.Door.Decide(ctx, id, choice, r.PostFormValue("from"), "web "+s.name)
		if err != nil {
			return err
		}
		id, done = d.Run.RunID, fmt.Sprintf("Run %s: decided %s.", d.RunID, choice)
	default:
		h.notFound(w, r, "There is no action "+action+" on a run.")
		return nil
	}
	http.Redirect(w, r, h.doneURL(s, "/runs/"+url.PathEscape(id), done), http.StatusSeeOther)
	return nil
}

// deadLetterID checks that s may act on a dead letter and reads the id
// of the one the request names. ok is false when the request is answered
// already (a refusal in err, or a page for an id that is none).
func (h *Handler) deadLetterID(w http.ResponseWriter, r *http.Request, s *session) (id int64, ok bool, err error) {
	if err := need(s, store.ScopeWrite, "acting on a dead letter"); err != nil {
		return 0, false, err
	}
	id, err = strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		h.notFound(w, r, "There is no dead letter "+r.PathValue("id")+".")
		return 0, false, nil
	}
	return id, true, nil
}

// deadLetterConfirm asks to redrive or drop an open dead letter.
func (h *Handler) deadLetterConfirm(w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok, err := h.deadLetterID(w, r, s)
	if !ok {
		return err
	}
	dls, err := h.opts.Door.DeadLetters(r.Context(), false)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(dls, func(d interp.DeadLetterJSON) bool { return d.ID == id })
	if i < 0 {
		h.notFound(w, r, fmt.Sprintf("There is no open dead letter %d.", id))
		return nil
	}
	dl, action := dls[i], r.PathValue("action")
	what := fmt.Sprintf("item %d of step %s of run %s", dl.Index, dl.Step, dl.RunID)
	c := confirmView{Post: fmt.Sprintf("/ops/dead-letters/%d/%s", id, url.PathEscape(action)), Back: "/ops"}
	switch action {
	case "retry":
		c.Button, c.Question = "redrive", fmt.Sprintf("Redrive dead letter %d?", id)
		c.Detail = "The " + what + " runs again: the dead letter closes when it succeeds and stays open when it fails again."
	case "drop":
		c.Button, c.Question = "drop", fmt.Sprintf("Drop dead letter %d?", id)
		c.Detail = "The dead letter closes without running the " + what + " again. This cannot be undone."
	default:
		h.notFound(w, r, "There is no action "+action+" on a dead letter.")
		return nil
	}
	h.confirm(w, s, "ops", c)
	return nil
}

// deadLetterAction redrives or drops a dead letter.
func (h *Handler) deadLetterAction(w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok, err := h.deadLetterID(w, r, s)
	if !ok {
		return err
	}
	var done string
	switch r.PathValue("action") {
	case "retry":
		res, err := h.opts.Door.RetryDeadLetter(r.Context(), id)
		if err != nil {
			return err
		}
		done = fmt.Sprintf("Dead letter %d was run again and closed.", id)
		if !res.Retried {
			// The engine's words, as flowrun dlq retry prints them
			// ("dead letter N (STEP[I]) failed again: ...; the letter
			// stays open"), as a sentence.
			done = sentence(capitalize(res.Message))
		}
	case "drop":
		if _, err := h.opts.Door.DropDeadLetter(r.Context(), id); err != nil {
			return err
		}
		done = fmt.Sprintf("Dead letter %d dropped.", id)
	default:
		h.notFound(w, r, "There is no action "+r.PathValue("action")+" on a dead letter.")
		return nil
	}
	http.Redirect(w, r, h.doneURL(s, "/ops", done), http.StatusSeeOther)
	return nil
}

// scheduleConfirm asks to pause, unpause or trigger an active schedule.
func (h *Handler) scheduleConfirm(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeWrite, "acting on a schedule"); err != nil {
		return err
	}
	wf, name, action := r.PathValue("workflow"), r.PathValue("name"), r.PathValue("action")
	all, err := h.opts.Door.Schedules(r.Context())
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(sc interp.ScheduleJSON) bool { return sc.Workflow == wf && sc.Name == name })
	if i < 0 {
		h.notFound(w, r, "There is no active schedule "+wf+"/"+name+".")
		return nil
	}
	sc := all[i]
	c := confirmView{Post: "/ops/schedules/" + url.PathEscape(wf) + "/" + url.PathEscape(name) + "/" + url.PathEscape(action),
		Back: r.URL.Query().Get("back"), Button: action, Question: fmt.Sprintf("%s schedule %s/%s?", strings.ToUpper(action[:1])+action[1:], wf, name)}
	if c.Back != "/workflows/"+url.PathEscape(wf) {
		c.Back = "/ops" // only the two pages that list schedules
	}
	switch action {
	case "pause":
		c.Detail = "The schedule (" + sc.Kind + " " + sc.Spec + ") starts no run until it is unpaused."
	case "unpause":
		c.Detail = "The schedule (" + sc.Kind + " " + sc.Spec + ") starts runs again from its next fire on."
	case "trigger":
		c.Detail = "A run of workflow " + wf + " starts now, as if the schedule fired; its overlap policy (" + sc.Overlap + ") applies, so it may be skipped while an earlier run is unfinished."
	default:
		h.notFound(w, r, "There is no action "+action+" on a schedule.")
		return nil
	}
	h.confirm(w, s, "ops", c)
	return nil
}

// scheduleAction pauses, unpauses or triggers a schedule.
func (h *Handler) scheduleAction(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := need(s, store.ScopeWrite, "acting on a schedule"); err != nil {
		return err
	}
	wf, name, action := r.PathValue("workflow"), r.PathValue("name"), r.PathValue("action")
	var done string
	switch action {
	case "pause", "unpause":
		if _, err := h.opts.Door.PauseSchedule(r.Context(), wf, name, action == "pause"); err != nil {
			return err
		}
		done = fmt.Sprintf("Schedule %s/%s %sd.", wf, name, action)
	case "trigger":
		res, err := h.opts.Door.TriggerSchedule(r.Context(), wf, name)
		if err != nil {
			return err
		}
		if res.Fire.RunID != nil {
			done = fmt.Sprintf("Schedule %s/%s triggered: run %s.", wf, name, *res.Fire.RunID)
		} else {
			done = fmt.Sprintf("Schedule %s/%s: the trigger was skipped (%s) %s", wf, name, res.Fire.Reason, strings.Join(res.Unfinished, ", "))
		}
	default:
		h.notFound(w, r, "There is no action "+action+" on a schedule.")
		return nil
	}
	http.Redirect(w, r, h.doneURL(s, "/ops", done), http.StatusSeeOther)
	return nil
}

// formPayload composes a signal's payload from its form's inputs (the
// run page's signalForm): "v" for a scalar of kind "kind", "f.NAME" and
// "k.NAME" (its kind) for each field of an object. A box not ticked is
// false; a number that does not parse is said, naming the field.
func formPayload(q url.Values) (string, string) {
	value := func(kind, text, what string) (any, string) {
		switch kind {
		case "bool":
			return text != "", ""
		case "number":
			n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
			if err != nil {
				return nil, fmt.Sprintf("%s must be a number, got %q.", what, text)
			}
			return n, ""
		case "int":
			n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
			if err != nil {
				return nil, fmt.Sprintf("%s must be a whole number, got %q.", what, text)
			}
			return n, ""
		}
		return text, ""
	}
	var payload any
	if q.Get("mode") == "scalar" {
		v, msg := value(q.Get("kind"), q.Get("v"), "The value")
		if msg != "" {
			return "", msg
		}
		payload = v
	} else {
		obj := map[string]any{}
		for key := range q {
			name, ok := strings.CutPrefix(key, "k.")
			if !ok {
				continue
			}
			v, msg := value(q.Get(key), q.Get("f."+name), "Field "+name)
			if msg != "" {
				return "", msg
			}
			obj[name] = v
		}
		payload = obj
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return "", err.Error()
	}
	return string(b), ""
}
