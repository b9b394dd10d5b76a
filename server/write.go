package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// writeJSON answers v as JSON with status. A json.Marshaler (interp's
// RunView) writes its own bytes, as the CLI's --json prints them.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var b []byte
	var err error
	if m, ok := v.(json.Marshaler); ok {
		b, err = m.MarshalJSON()
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encoding the answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

func quoteSorted(names []string) string {
	sort.Strings(names)
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
