package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// This file serves POST /v1/workflows/{workflow}/runs/batch (spec/api.md):
// many runs of one version in one store transaction, every item checked
// first; one bad item rejects the batch, its index in the message and in
// the problem's field, and nothing is written.

// batchRoutes registers the batch start route.
func (s *Server) batchRoutes() {
	s.Handle(Route{Method: http.MethodPost, Path: "/v1/workflows/{workflow}/runs/batch", Scope: store.ScopeWrite, Handler: s.startBatch})
}

// batchRequest is the body of a batch start; each run is decoded on its
// own, so that a mistake names its index.
type batchRequest struct {
	Version string            `json:"version"`
	New     bool              `json:"new"`
	Runs    []json.RawMessage `json:"runs"`
}

// batchItem is one run of a batch.
type batchItem struct {
	Inputs map[string]any `json:"inputs"`
}

// batchRun is one run of a batch's answer.
type batchRun struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	Key      string `json:"key"`
	Status   string `json:"status"`
	// Created is false for a run its key named (language.md §2).
	Created bool `json:"created"`
}

// startBatch starts the runs of a batch: 201 when it created any, 200 when
// every item named a run that exists, with the runs in item order.
func (s *Server) startBatch(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var req batchRequest
	if err := decodeBody(b, &req); err != nil {
		return err
	}
	if len(req.Runs) == 0 || len(req.Runs) > interp.MaxBatchRuns {
		return &Problem{Status: http.StatusBadRequest, Field: "runs", Detail: (&interp.BatchSizeError{N: len(req.Runs)}).Error()}
	}
	ctx := r.Context()
	workflow := r.PathValue("workflow")
	g, err := s.pinnedGraph(ctx, workflow, req.Version)
	if err != nil {
		return err
	}
	items := make([]map[string]any, len(req.Runs))
	for i, raw := range req.Runs {
		it, err := decodeBatchItem(raw)
		if err != nil {
			return itemProblem(i, err)
		}
		in, err := interp.ConvertInputs(ctx, interp.ConvertInputsParams{Graph: g, Object: it.Inputs})
		if err != nil {
			return itemProblem(i, err)
		}
		items[i] = in
	}
	res, err := s.eng.StartRuns(ctx, interp.BatchParams{Workflow: workflow, Version: g.Version, Items: items, New: req.New})
	var be *interp.BatchItemError
	if errors.As(err, &be) {
		return itemProblem(be.Index, be.Err)
	}
	if err != nil {
		return err
	}
	out := struct {
		Runs []batchRun `json:"runs"`
	}{Runs: make([]batchRun, len(res))}
	status := http.StatusOK
	for i, x := range res {
		if x.Created {
			status = http.StatusCreated
		}
		out.Runs[i] = batchRun{RunID: x.Run.ID, Workflow: x.Run.Workflow, Version: x.Run.Version, Key: x.Run.Key,
			Status: string(x.Run.Status), Created: x.Created}
	}
	return writeJSON(w, status, out)
}

// decodeBatchItem decodes one run of a batch: an object whose only field
// is "inputs", an object.
func decodeBatchItem(raw json.RawMessage) (batchItem, error) {
	var it batchItem
	if isNull(bytes.TrimSpace(raw)) {
		// encoding/json would leave it empty: a run with no inputs
		return it, &Problem{Status: http.StatusBadRequest, Detail: "it is null, not an object like {\"inputs\": {...}}"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber() // made exact below (decodeBody says why)
	err := dec.Decode(&it)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return it, exactNumbers(reflect.ValueOf(&it))
	case errors.As(err, &te) && te.Field == "":
		return it, &Problem{Status: http.StatusBadRequest, Detail: fmt.Sprintf("it is %s, not an object like {\"inputs\": {...}}", kindOfJSON(te.Value))}
	case errors.As(err, &te):
		return it, &Problem{Status: http.StatusBadRequest, Field: te.Field, Detail: fmt.Sprintf("its field %q is %s, not an object", te.Field, kindOfJSON(te.Value))}
	}
	return it, &Problem{Status: http.StatusBadRequest, Detail: fmt.Sprintf("%v; a run of a batch is an object whose only field is \"inputs\"", err)}
}

// itemProblem words an item's refusal as the refusal of the batch: the
// status of the item's own problem, its message after "runs[i]: ", and
// the field runs[i] (runs[i].inputs.NAME for a workflow input).
func itemProblem(i int, err error) error {
	p := problemOf(err)
	var dk *interp.DuplicateKeyError
	if errors.As(err, &dk) {
		p.Status = http.StatusBadRequest
	}
	field := fmt.Sprintf("runs[%d]", i)
	var ie *interp.InputError
	var ce *interp.ConvertError
	switch {
	case errors.As(err, &ie):
		field += ".inputs." + ie.Input
	case errors.As(err, &ce) && ce.Name != "":
		field += ".inputs." + ce.Name
	case p.Field != "":
		field += "." + p.Field
	}
	return &Problem{Status: p.Status, Field: field, Err: err,
		Detail: fmt.Sprintf("runs[%d]: %s; nothing of the batch was written", i, p.Detail)}
}
