package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/flowrun/flowrun/spec"
)

// openAPIJSON is spec/openapi.yaml as JSON, converted once, on the first
// request (a package-level sync.OnceValues would itself be work at
// start-up).
func openAPIJSON() ([]byte, error) {
	openAPIOnce.Do(func() {
		var doc any
		if err := yaml.Unmarshal(spec.OpenAPI, &doc); err != nil {
			openAPIErr = fmt.Errorf("spec/openapi.yaml: %w", err)
			return
		}
		openAPIDoc, openAPIErr = json.Marshal(doc)
		if openAPIErr != nil {
			openAPIErr = fmt.Errorf("spec/openapi.yaml as JSON: %w", openAPIErr)
		}
	})
	return openAPIDoc, openAPIErr
}

var (
	openAPIOnce sync.Once
	openAPIDoc  []byte
	openAPIErr  error
)

// openAPI answers GET /v1/openapi.json, without a token: the document
// says what the routes are, not what the store holds.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	b, err := openAPIJSON()
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, json.RawMessage(b))
}
