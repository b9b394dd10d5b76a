package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/flowrun/flowrun/api"
)

// maxDeployBody bounds the body of POST /v1/versions: the workflow files
// of one apply, as JSON.
const maxDeployBody = 64 << 20

// deployRequest is the body of POST /v1/versions.
type deployRequest struct {
	Files []api.SourceFile `json:"files"`
}

// maxDeployFiles bounds how many files one deploy carries.
const maxDeployFiles = 1000

// deploy answers POST /v1/versions: the workflow files of flowrun apply
// --server, compiled and checked here with the same front end and version
// rules as a local apply (api.Local.Deploy), and stored when every
// version holds; 200 with what was stored, 422 with the diagnostics
// otherwise (nothing stored).
func (s *Server) deploy(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var req deployRequest
	if err := decodeBody(b, &req); err != nil {
		return err
	}
	switch {
	case len(req.Files) == 0:
		return &Problem{Status: http.StatusBadRequest, Field: "files", Detail: "the deploy holds no files; send {\"files\": [{\"name\": \"x.hcl\", \"source\": \"...\"}]}"}
	case len(req.Files) > maxDeployFiles:
		return &Problem{Status: http.StatusBadRequest, Field: "files", Detail: fmt.Sprintf("the deploy holds %d files, more than %d", len(req.Files), maxDeployFiles)}
	}
	seen := map[string]bool{}
	for i, f := range req.Files {
		if f.Name == "" || seen[f.Name] {
			return &Problem{Status: http.StatusBadRequest, Field: fmt.Sprintf("files[%d].name", i), Detail: fmt.Sprintf("file %d has no name, or one an earlier file has (%q); give every file its own name", i, f.Name)}
		}
		seen[f.Name] = true
	}
	res, err := s.door.Deploy(r.Context(), req.Files)
	var de *api.DeployError
	if errors.As(err, &de) {
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: de.Message, Err: err}
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
