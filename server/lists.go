package server

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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

// listRuns answers GET /v1/runs: the filters of flowrun runs (status,
// workflow), key (with workflow: the newest run with that key), limit
// and an opaque cursor.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "status", "workflow", "key", "limit", "cursor")
	if err != nil {
		return err
	}
	p := store.RunListParams{Workflow: q.Get("workflow"), Limit: defaultRunsLimit}
	if st := q.Get("status"); st != "" {
		p.Status = store.RunStatus(st)
		known := false
		names := make([]string, len(runStatuses))
		for i, s := range runStatuses {
			known = known || s == p.Status
			names[i] = string(s)
		}
		if !known {
			return &Problem{Status: http.StatusBadRequest, Field: "status", Detail: fmt.Sprintf("status %q is not one of %s", st, strings.Join(names, ", "))}
		}
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxRunsLimit {
			return &Problem{Status: http.StatusBadRequest, Field: "limit", Detail: fmt.Sprintf("limit %q is not a whole number from 1 to %d", l, maxRunsLimit)}
		}
		p.Limit = n
	}
	if c := q.Get("cursor"); c != "" {
		if p.BeforeID, err = decodeCursor(c); err != nil {
			return err
		}
	}
	ctx := r.Context()
	var runs []store.RunSummary
	if key := q.Get("key"); q.Has("key") {
		if p.Workflow == "" {
			return &Problem{Status: http.StatusBadRequest, Field: "key", Detail: "the key filter needs the workflow filter too: ?workflow=W&key=K"}
		}
		runs, err = s.runByKey(r, p, key)
	} else {
		runs, err = s.st.RunList(ctx, p)
	}
	if err != nil {
		return err
	}
	page := runsPage{Runs: interp.RunSummaries(runs)}
	if err := interp.AddRunSchedules(ctx, s.st, page.Runs); err != nil {
		return err
	}
	if len(runs) == p.Limit {
		c := encodeCursor(runs[len(runs)-1].ID)
		page.NextCursor = &c
	}
	return writeJSON(w, http.StatusOK, page)
}

// runByKey lists the newest run of p.Workflow with the key (the run
// flowrun names as WORKFLOW/KEY), if it passes p's other filters.
func (s *Server) runByKey(r *http.Request, p store.RunListParams, key string) ([]store.RunSummary, error) {
	run, err := s.eng.ResolveRun(r.Context(), p.Workflow+"/"+key)
	var re *interp.RunRefError
	if errors.As(err, &re) && re.Problem == interp.RefNoMatch {
		return nil, nil
	}
	if errors.As(err, &re) {
		return nil, &Problem{Status: http.StatusBadRequest, Field: "key", Detail: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	if p.Status != "" && run.Status != p.Status || p.BeforeID != "" && run.ID >= p.BeforeID {
		return nil, nil
	}
	all, err := s.st.RunList(r.Context(), store.RunListParams{Workflow: run.Workflow, IDPrefix: run.ID, Limit: 1})
	return all, err
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
	vs, err := s.eng.Versions(r.Context(), "")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, interp.Workflows(vs))
}

// listVersions answers GET /v1/workflows/{workflow}/versions: its stored
// versions, oldest first; 404 naming the nearest workflow when it has
// none.
func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	wf := r.PathValue("workflow")
	vs, err := s.eng.Versions(r.Context(), wf)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		_, err := s.eng.ResolveVersion(r.Context(), wf, "")
		return err
	}
	return writeJSON(w, http.StatusOK, interp.VersionsJSON(vs))
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
	ds, err := s.eng.DeadLetterList(r.Context(), all)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, interp.DeadLetters(ds, all))
}

// listBreakers answers GET /v1/breakers, as flowrun breakers --json.
func (s *Server) listBreakers(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	bs, err := s.eng.BreakerList(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, interp.Breakers(bs))
}

// listWorkers answers GET /v1/workers, as flowrun workers --json.
func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	ws, err := s.eng.WorkerList(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, interp.Workers(ws))
}

// listSchedules answers GET /v1/schedules, as flowrun schedules --json.
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	scs, err := s.st.ScheduleList(r.Context(), store.ScheduleListParams{})
	if err != nil {
		return err
	}
	out, err := interp.Schedules(r.Context(), s.st, scs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}
