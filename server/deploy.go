package server

import (
	"errors"
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
	files, err := readFiles(r, "deploy")
	if err != nil {
		return err
	}
	res, err := s.door.Deploy(r.Context(), files)
	var de *api.DeployError
	if errors.As(err, &de) {
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: de.Message, Err: err}
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
