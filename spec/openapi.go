package spec

import _ "embed"

// OpenAPI is spec/openapi.yaml, the OpenAPI 3.1 document of the HTTP API
// (flowrun serve), embedded so the server can serve it.
//
//go:embed openapi.yaml
var OpenAPI []byte
