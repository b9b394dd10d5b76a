package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
)

func inputsGraph() *graph.Graph {
	return &graph.Graph{
		Workflow: "ship",
		Inputs: []graph.Input{
			{Name: "order_id", Type: graph.TypeString},
			{Name: "amount", Type: graph.TypeNumber},
			{Name: "express", Type: graph.TypeBool, Default: json.RawMessage("false")},
			{Name: "tags", Type: graph.ListOf(graph.TypeString), Default: json.RawMessage("[]")},
			{Name: "address", Type: graph.ObjectOf(map[string]*graph.Type{"city": graph.TypeString}), Default: json.RawMessage(`{"city":"x"}`)},
		},
	}
}

func TestReadInputsConverts(t *testing.T) {
	t.Parallel()
	got, err := readInputs(context.Background(), inputsGraph(), []string{
		"order_id=A-1=2", "amount=10.5", "express=true", `tags=["a","b"]`, `address={"city":"Oslo"}`,
	}, "", lang.DefaultMaxInputsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"order_id": "A-1=2", "amount": 10.5, "express": true,
		"tags": []any{"a", "b"}, "address": map[string]any{"city": "Oslo"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readInputs = %#v, want %#v", got, want)
	}
}

func TestReadInputsRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		pairs []string
		msg   string
	}{
		{"unknown", []string{"order_id=A", "amount=1", "colour=red"}, `workflow "ship" has no input "colour"; it declares "address", "amount", "express", "order_id", "tags"`},
		{"missing", []string{"order_id=A"}, `workflow "ship" needs input "amount", which has no default`},
		{"missing two", nil, `needs inputs "amount", "order_id", which have no default`},
		{"not a number", []string{"order_id=A", "amount=ten"}, `--input amount=ten: "ten" is not a number`},
		{"not a bool", []string{"order_id=A", "amount=1", "express=yes"}, `"yes" is not a bool (true or false)`},
		{"bad JSON", []string{"order_id=A", "amount=1", "tags=[a]"}, `not valid JSON for list(string)`},
		{"wrong element", []string{"order_id=A", "amount=1", "tags=[1]"}, `tags[0] must be a string, got a number`},
		{"missing field", []string{"order_id=A", "amount=1", "address={}"}, `address is missing the field "city"`},
		{"no equals", []string{"order_id"}, `--input "order_id" is not NAME=VALUE`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := readInputs(context.Background(), inputsGraph(), tt.pairs, "", lang.DefaultMaxInputsFile)
			var xe *exitError
			if !errors.As(err, &xe) || xe.code != ExitInvalid {
				t.Fatalf("readInputs(%q) = %v, want an exit-2 error", tt.pairs, err)
			}
			if !strings.Contains(xe.message(), tt.msg) {
				t.Errorf("message %q does not contain %q", xe.message(), tt.msg)
			}
			if xe.hintText == "" {
				t.Errorf("no hint for %q", xe.message())
			}
		})
	}
}

func TestReadInputsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"order_id": "A-1", "amount": 3}`)
	got, err := readInputs(context.Background(), inputsGraph(), []string{"amount=4"}, good, lang.DefaultMaxInputsFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[string]any{"order_id": "A-1", "amount": 4.0}); !reflect.DeepEqual(got, want) {
		t.Errorf("--input must win over the file: got %v, want %v", got, want)
	}

	for _, tt := range []struct{ name, content, msg string }{
		{"syntax.json", "{\n  \"order_id\": \"A-1\",\n  \"amount\": x\n}", "syntax.json:3:13: the inputs file is not valid JSON: invalid character 'x'"},
		{"short.json", `{"order_id": "A-1"`, "short.json:1:19: the inputs file is not valid JSON: unexpected end of JSON input"},
		{"empty.json", ``, "empty.json:1:1: the inputs file is not valid JSON"},
		{"trailing.json", `{"order_id": "A-1", "amount": 1} {}`, "trailing.json:1:34: the inputs file is not valid JSON: unexpected data after the JSON value"},
		{"list.json", `[1]`, "list.json holds a list, not a JSON object of inputs"},
		{"typed.json", `{"order_id": 5, "amount": 1}`, "typed.json: order_id must be a string, got a number"},
	} {
		_, err := readInputs(context.Background(), inputsGraph(), nil, write(tt.name, tt.content), lang.DefaultMaxInputsFile)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.msg)
		}
	}
}
