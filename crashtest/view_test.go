package crashtest

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// runView is the part of `flowrun show --json` (and apply --json) the
// proofs read; the field names are the CLI's documented interface.
type runView struct {
	RunID   string               `json:"run_id"`
	Status  string               `json:"status"`
	Outputs json.RawMessage      `json:"outputs"`
	Error   json.RawMessage      `json:"error"`
	Steps   map[string]*stepView `json:"steps"`
}

// stepView is one step of a runView.
type stepView struct {
	Status   string          `json:"status"`
	Attempts int             `json:"attempts"`
	Output   json.RawMessage `json:"output"`
}

// decodeView decodes the JSON object a command printed.
func decodeView(t *testing.T, stdout string) *runView {
	t.Helper()
	var v runView
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("the command printed no run JSON (%v):\n%s", err, stdout)
	}
	return &v
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// readLines reads a text file's non-empty lines; a missing file has none.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
