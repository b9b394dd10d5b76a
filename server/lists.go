package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Page sizes of GET /v1/runs.
const (
	defaultRunsLimit = 50
	maxRunsLimit     = 1000
)

// runStatuses are the statuses GET /v1/runs filters by.
var runStatuses = []store.RunStatus{store.RunPending, store.RunRunning, store.RunWaiting, store.RunBlocked,
	store.RunCompleted, store.RunFailed, store.RunCanceled}

// runsPage is the answer of GET /v1/runs: the summaries runs --json
// prints, newest first, and the cursor of the next page (null on the
// last).
type runsPage struct {
	Runs       []interp.RunSummaryJSON `json:"runs"`
	NextCursor *string                 `json:"next_cursor"`
}

// query checks that the request's query has only the parameters allowed
// (a misspelled filter must not list everything) and returns it.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	q := r.URL.Query()
	for k := range q {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			what := "no parameters"
			if len(allowed) > 0 {
				what = "the parameters " + quoteSorted(append([]string(nil), allowed...))
			}
			return nil, &Problem{Status: http.StatusBadRequest, Field: k,
				Detail: fmt.Sprintf("unknown query parameter %q; %s %s takes %s", k, r.Method, r.URL.Path, what)}
		}
		if len(q[k]) > 1 {
			return nil, &Problem{Status: http.StatusBadRequest, Field: k, Detail: fmt.Sprintf("query parameter %q is given %d times; give it once", k, len(q[k]))}
		}
	}
	return q, nil
}

// listRuns answers GET /v1/runs: the filters of flowrun runs (status, one
// or several comma-separated; workflow; key; since; children), limit and
// an opaque cursor, through the api.Service the CLI uses.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "status", "workflow", "key", "since", "until", "children", "limit", "cursor", "text")
	if err != nil {
		return err
	}
	rq := api.RunsQuery{Workflow: q.Get("workflow"), Key: q.Get("key"), Limit: defaultRunsLimit, Children: true, Text: q.Get("text")}
	if st := q.Get("status"); st != "" {
		names := make([]string, len(runStatuses))
		for i, s := range runStatuses {
			names[i] = string(s)
		}
		for _, one := range strings.Split(st, ",") {
			if !slices.Contains(names, one) {
				return &Problem{Status: http.StatusBadRequest, Field: "status", Detail: fmt.Sprintf("status %q is not one of %s", one, strings.Join(names, ", "))}
			}
			if !slices.Contains(rq.Statuses, store.RunStatus(one)) {
				rq.Statuses = append(rq.Statuses, store.RunStatus(one))
			}
		}
	}
	if since := q.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return &Problem{Status: http.StatusBadRequest, Field: "since", Detail: fmt.Sprintf("since %q is not an RFC 3339 time, such as 2026-12-01T09:00:00Z", since)}
		}
		rq.Since = t
	}
	if until := q.Get("until"); until != "" {
		t, err := time.Parse(time.RFC3339Nano, until)
		if err != nil {
			return &Problem{Status: http.StatusBadRequest, Field: "until", Detail: fmt.Sprintf("until %q is not an RFC 3339 time, such as 2026-12-01T09:00:00Z", until)}
		}
		rq.Until = t
	}
	if c := q.Get("children"); c != "" {
		b, err := strconv.ParseBool(c)
		if err != nil {
			return &Problem{Status: http.StatusBadRequest, Field: "children", Detail: fmt.Sprintf("children %q is not true or false", c)}
		}
		rq.Children = b
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxRunsLimit {
			return &Problem{Status: http.StatusBadRequest, Field: "limit", Detail: fmt.Sprintf("limit %q is not a whole number from 1 to %d", l, maxRunsLimit)}
		}
		rq.Limit = n
	}
	if c := q.Get("cursor"); c != "" {
		if rq.Before, err = decodeCursor(c); err != nil {
			return err
		}
	}
	runs, err := s.door.Runs(r.Context(), rq)
	if err != nil {
		return err
	}
	page := runsPage{Runs: runs}
	if len(runs) == rq.Limit {
		c := encodeCursor(runs[len(runs)-1].RunID)
		page.NextCursor = &c
	}
	return writeJSON(w, http.StatusOK, page)
}

// cursorPrefix versions the cursor's form.
const cursorPrefix = "r1:"

func encodeCursor(lastID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + lastID))
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	id, ok := strings.CutPrefix(string(b), cursorPrefix)
	if err != nil || !ok || id == "" {
		return "", &Problem{Status: http.StatusBadRequest, Field: "cursor", Detail: "the cursor is not one this server gave; pass next_cursor of the previous page as it is"}
	}
	return id, nil
}

// listWorkflows answers GET /v1/workflows: every stored workflow with its
// newest version.
func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	wfs, err := s.door.Workflows(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, wfs)
}

// listVersions answers GET /v1/workflows/{workflow}/versions: its stored
// versions, oldest first; 404 naming the nearest workflow when it has
// none.
func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	vs, err := s.door.Versions(r.Context(), r.PathValue("workflow"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, vs)
}

// listDeadLetters answers GET /v1/dead-letters: the open ones, or with
// all=true every one (as dlq list --all).
func (s *Server) listDeadLetters(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "all")
	if err != nil {
		return err
	}
	all := false
	if v := q.Get("all"); q.Has("all") {
		if all, err = strconv.ParseBool(v); err != nil {
			return &Problem{Status: http.StatusBadRequest, Field: "all", Detail: fmt.Sprintf("all %q is not true or false", v)}
		}
	}
	ds, err := s.door.DeadLetters(r.Context(), all)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ds)
}

// deadLetterID reads the {id} of a dead letter's route.
func deadLetterID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, &Problem{Status: http.StatusBadRequest, Detail: fmt.Sprintf("%q is not a dead letter id; ids are whole numbers such as 3", v)}
	}
	return id, nil
}

// retryDeadLetter answers POST /v1/dead-letters/{id}/retry: the item runs
// again here, as dlq retry runs it; 200 with what became of it (retried,
// or the letter still open and why).
func (s *Server) retryDeadLetter(w http.ResponseWriter, r *http.Request) error {
	id, err := deadLetterID(r)
	if err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := decodeBody(b, &struct{}{}); err != nil {
		return err
	}
	res, err := s.door.RetryDeadLetter(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// dropDeadLetter answers POST /v1/dead-letters/{id}/drop: the letter
// closed without running it; 200 with the letter.
func (s *Server) dropDeadLetter(w http.ResponseWriter, r *http.Request) error {
	id, err := deadLetterID(r)
	if err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := decodeBody(b, &struct{}{}); err != nil {
		return err
	}
	d, err := s.door.DropDeadLetter(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}

// listBreakers answers GET /v1/breakers, as flowrun breakers --json.
func (s *Server) listBreakers(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	bs, err := s.door.Breakers(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, bs)
}

// listWorkers answers GET /v1/workers, as flowrun workers --json.
func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	ws, err := s.door.Workers(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ws)
}

// listSchedules answers GET /v1/schedules, as flowrun schedules --json.
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	out, err := s.door.Schedules(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// scheduleAction answers POST /v1/schedules/{workflow}/{name}/pause,
// /unpause and /trigger, as flowrun schedules pause, unpause and trigger.
func (s *Server) scheduleAction(action string) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		b, err := readBody(r)
		if err != nil {
			return err
		}
		if err := decodeBody(b, &struct{}{}); err != nil {
			return err
		}
		wf, name := r.PathValue("workflow"), r.PathValue("name")
		if action == "trigger" {
			t, err := s.door.TriggerSchedule(r.Context(), wf, name)
			if err != nil {
				return err
			}
			return writeJSON(w, http.StatusOK, t)
		}
		sc, err := s.door.PauseSchedule(r.Context(), wf, name, action == "pause")
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, sc)
	}
}
