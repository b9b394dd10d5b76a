package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// readFiles reads the workflow files of a deploy or a plan: {"files":
// [{"name", "source"}]}, at least one and at most maxDeployFiles, each
// with its own name.
func readFiles(r *http.Request, verb string) ([]api.SourceFile, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	var req deployRequest
	if err := decodeBody(b, &req); err != nil {
		return nil, err
	}
	switch {
	case len(req.Files) == 0:
		return nil, &Problem{Status: http.StatusBadRequest, Field: "files", Detail: fmt.Sprintf("the %s holds no files; send {\"files\": [{\"name\": \"x.hcl\", \"source\": \"...\"}]}", verb)}
	case len(req.Files) > maxDeployFiles:
		return nil, &Problem{Status: http.StatusBadRequest, Field: "files", Detail: fmt.Sprintf("the %s holds %d files, more than %d", verb, len(req.Files), maxDeployFiles)}
	}
	seen := map[string]bool{}
	for i, f := range req.Files {
		if f.Name == "" || seen[f.Name] {
			return nil, &Problem{Status: http.StatusBadRequest, Field: fmt.Sprintf("files[%d].name", i), Detail: fmt.Sprintf("file %d has no name, or one an earlier file has (%q); give every file its own name", i, f.Name)}
		}
		seen[f.Name] = true
	}
	return req.Files, nil
}

// plan answers POST /v1/versions/plan: the workflow files of flowrun plan
// --server, compiled and checked as POST /v1/versions does them
// (api.Local.Plan) but stored nowhere; 200 with each workflow's version
// check (a refused version too), the stored graph it is compared with and
// what it would do to the unfinished runs, 422 with the diagnostics of
// files that do not compile.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) error {
	files, err := readFiles(r, "plan")
	if err != nil {
		return err
	}
	res, err := s.door.Plan(r.Context(), files)
	var de *api.DeployError
	if errors.As(err, &de) {
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: de.Message, Err: err}
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// versionGraph answers GET /v1/workflows/{workflow}/versions/{version}/graph:
// the stored graph of a version as the store holds it (its canonical JSON,
// whose SHA-256 is the version's graph_hash), for flowrun diff
// WORKFLOW@VERSION --server.
func (s *Server) versionGraph(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	wf, ver := r.PathValue("workflow"), r.PathValue("version")
	if _, err := graph.ParseVersion(ver); err != nil {
		return &Problem{Status: http.StatusBadRequest, Field: "version", Detail: fmt.Sprintf("%v; write a version as MAJOR.MINOR.PATCH, such as 1.0.0", err)}
	}
	g, err := s.door.VersionGraph(r.Context(), wf, ver)
	if errors.Is(err, store.ErrNotFound) {
		// The words of flowrun diff WORKFLOW@VERSION on its own store.
		return &api.Refusal{Status: http.StatusNotFound, Field: "version",
			Message: fmt.Sprintf("version %s of workflow %q is not stored", ver, wf),
			Hint:    fmt.Sprintf("GET /v1/workflows/%s/versions (flowrun versions %s) lists the stored versions.", url.PathEscape(wf), wf)}
	}
	if err != nil {
		return err
	}
	b, err := graph.Encode(g)
	if err != nil {
		return fmt.Errorf("encoding the graph of workflow %q version %s: %w", wf, ver, err)
	}
	return writeJSON(w, http.StatusOK, rawJSON(b))
}

// rawJSON is an answer already encoded.
type rawJSON []byte

func (b rawJSON) MarshalJSON() ([]byte, error) { return b, nil }
