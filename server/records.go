package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/store"
)

// This file answers GET /v1/records/...: the store's own records, read
// through the one door (api.Records), for the live faces that follow every
// run (flowrun's flowtui --server, a dashboard). Each answer is the JSON
// form of the store's type (spec/api.md §11).

// Bounds of GET /v1/records/runs/{id}/output.
const maxRecordChunks = 1024

// intParam reads an optional whole-number query parameter in [lo, hi];
// def when absent.
func intParam(q map[string][]string, name string, def, lo, hi int64) (int64, error) {
	v, ok := q[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, &Problem{Status: http.StatusBadRequest, Field: name, Detail: fmt.Sprintf("query parameter %s must be a whole number from %d to %d, got %q", name, lo, hi, v[0])}
	}
	return n, nil
}

// boolParam reads an optional true/false query parameter.
func boolParam(q map[string][]string, name string) (bool, error) {
	v, ok := q[name]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, &Problem{Status: http.StatusBadRequest, Field: name, Detail: fmt.Sprintf("query parameter %s must be true or false, got %q", name, v[0])}
	}
	return b, nil
}

func (s *Server) recordRuns(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "workflow")
	if err != nil {
		return err
	}
	runs, err := s.door.RunList(r.Context(), store.RunListParams{Workflow: q.Get("workflow")})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(runs))
}

func (s *Server) recordRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	run, err := s.door.RunFind(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, clientRun(run))
}

// clientRun is a run's record as a client is shown it: its work_dir, a
// path of the server's and no business of a client, left empty (api.md
// §12). Every answer that holds a run's record goes through it.
func clientRun(run store.Run) store.Run {
	run.WorkDir = ""
	return run
}

func (s *Server) recordSteps(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "tops")
	if err != nil {
		return err
	}
	tops, err := boolParam(q, "tops")
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	var steps []store.Step
	if tops {
		steps, err = s.door.StepTops(r.Context(), id)
	} else {
		steps, err = s.door.StepList(r.Context(), id)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(steps))
}

func (s *Server) recordSignals(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "pending")
	if err != nil {
		return err
	}
	pending, err := boolParam(q, "pending")
	if err != nil {
		return err
	}
	sigs, err := s.door.SignalList(r.Context(), r.PathValue("id"), pending)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(sigs))
}

func (s *Server) recordAttempts(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "step")
	if err != nil {
		return err
	}
	if q.Get("step") == "" {
		return &Problem{Status: http.StatusBadRequest, Field: "step", Detail: "query parameter step (a step key, such as fetch or each[3]) is required"}
	}
	as, err := s.door.AttemptList(r.Context(), r.PathValue("id"), q.Get("step"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(as))
}

func (s *Server) recordOutput(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "after", "limit")
	if err != nil {
		return err
	}
	after, err := intParam(q, "after", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(q, "limit", 256, 1, maxRecordChunks)
	if err != nil {
		return err
	}
	cs, err := s.door.StepOutputChunks(r.Context(), r.PathValue("id"), after, int(limit))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(cs))
}

// recordEvents answers the events after an id. With wait (a duration up
// to the server's --max-wait) and none yet, it answers at the first commit
// that appends one, or when wait has passed (an empty list): a face
// follows the store with one request per change, not one per tick.
func (s *Server) recordEvents(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "run", "after", "limit", "wait")
	if err != nil {
		return err
	}
	after, err := intParam(q, "after", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(q, "limit", api.MaxRecordEvents, 1, api.MaxRecordEvents)
	if err != nil {
		return err
	}
	wait, err := s.parseWait(q.Get("wait"))
	if err != nil {
		return err
	}
	p := store.EventListParams{RunID: q.Get("run"), AfterID: after, Limit: int(limit)}
	evs, err := s.door.EventList(r.Context(), p)
	if err != nil || len(evs) > 0 || wait == 0 {
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, nonNilSlice(evs))
	}
	ctx, cancel := clockTimeout(r.Context(), s, wait)
	defer cancel()
	stop := context.AfterFunc(s.streams, cancel)
	defer stop()
	defer s.watchCommits()()
	for {
		changed, since := s.nextChange(), s.clk.Now()
		if evs, err = s.door.EventList(r.Context(), p); err != nil {
			return err
		}
		if len(evs) > 0 || s.awaitChange(ctx, changed, settleEvery, streamGap, since) != nil {
			return writeJSON(w, http.StatusOK, nonNilSlice(evs))
		}
	}
}

func (s *Server) recordVersions(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "workflow")
	if err != nil {
		return err
	}
	vs, err := s.door.VersionHeads(r.Context(), q.Get("workflow"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(vs))
}

func (s *Server) recordGraph(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	b, err := s.door.StoredGraph(r.Context(), r.PathValue("workflow"), r.PathValue("hash"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, max-age=31536000, immutable") // a hash names one graph for good
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(b)
	return err
}

func (s *Server) recordDeadLetters(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "all")
	if err != nil {
		return err
	}
	all, err := boolParam(q, "all")
	if err != nil {
		return err
	}
	ds, err := s.door.DeadLetterList(r.Context(), all)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(ds))
}

func (s *Server) recordBreakers(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	bs, err := s.door.BreakerList(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(bs))
}

func (s *Server) recordSchedules(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "workflow", "inactive")
	if err != nil {
		return err
	}
	inactive, err := boolParam(q, "inactive")
	if err != nil {
		return err
	}
	ss, err := s.door.ScheduleList(r.Context(), store.ScheduleListParams{Workflow: q.Get("workflow"), Inactive: inactive})
	if err != nil {
		return err
	}
	for i := range ss {
		ss[i].WorkDir = ""
	}
	return writeJSON(w, http.StatusOK, nonNilSlice(ss))
}

func (s *Server) recordSource(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	name, src, err := s.door.VersionSource(r.Context(), r.PathValue("workflow"), r.PathValue("hash"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"name": name, "source": string(src)})
}

func (s *Server) recordQueue(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	q, err := s.door.RunQueue(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, q)
}

// planDecision answers GET /v1/runs/{id}/decision/plan: what each
// version choice would do to the run (api.Decider.PlanDecision).
func (s *Server) planDecision(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	p, err := s.door.PlanDecision(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	p.Run = clientRun(p.Run)
	return writeJSON(w, http.StatusOK, p)
}

// nonNilSlice is s, or an empty slice for nil, so an empty list is [].
func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
