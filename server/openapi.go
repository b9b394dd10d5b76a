package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/flowrun/flowrun/spec"
)

// openAPIJSON is spec/openapi.yaml as JSON, converted once.
var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(spec.OpenAPI, &doc); err != nil {
		return nil, fmt.Errorf("spec/openapi.yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("spec/openapi.yaml as JSON: %w", err)
	}
	return b, nil
})

// openAPI answers GET /v1/openapi.json, without a token: the document
// says what the routes are, not what the store holds.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	b, err := openAPIJSON()
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, json.RawMessage(b))
}
