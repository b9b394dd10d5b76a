package graph_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
)

// passEnvBase is a workflow without pass_env. Its hash was taken on the
// code before pass_env existed: a graph that does not use the attribute
// keeps the hash it was stored under.
const passEnvBase = `workflow "envs" {
  version = "1.0.0"
  step "a" {
    exec {
      command = ["sh", "-c", "echo $X"]
      env     = { X = "1" }
    }
  }
  alert "log" {
    on = ["failed"]
    exec { command = ["logger", "{{ run.id }}"] }
  }
}
`

const passEnvBaseHash = "0769fa9343c61e7f21f3d4f4fe0c733ff5f06db2369ca61b0e75e9561fbe9eca"

func passEnvGraph(t *testing.T, src string) *graph.Graph {
	t.Helper()
	m, diags := lang.LoadFile("envs.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	w := m.Workflow("envs")
	if w == nil || w.Graph == nil {
		t.Fatal("workflow envs missing or without graph")
	}
	return w.Graph
}

func TestPassEnvUnsetKeepsHash(t *testing.T) {
	g := passEnvGraph(t, passEnvBase)
	h, err := graph.Hash(g)
	if err != nil {
		t.Fatal(err)
	}
	if h != passEnvBaseHash {
		t.Fatalf("a workflow without pass_env hashes to %s, want %s (the hash stored graphs were sealed with)", h, passEnvBaseHash)
	}
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("pass_env")) {
		t.Fatalf("the encoding of a workflow without pass_env names it: %s", b)
	}
}

func TestPassEnvMerged(t *testing.T) {
	src := strings.Replace(passEnvBase, `version = "1.0.0"`, `version = "1.0.0"
  pass_env = ["KUBECONFIG", "AWS_PROFILE", "KUBECONFIG"]`, 1)
	src = strings.Replace(src, `env     = { X = "1" }`, `env     = { X = "1" }
      pass_env = ["NO_PROXY", "AWS_PROFILE"]`, 1)
	src = strings.Replace(src, `step "a" {`, `step "b" {
    exec { command = ["true"] }
  }
  step "c" {
    set { v = 1 }
  }
  step "a" {`, 1)
	g := passEnvGraph(t, src)
	byName := map[string]*graph.Step{}
	for _, s := range g.Steps {
		byName[s.Name] = s
	}
	if got, want := byName["a"].Action.Exec.PassEnv, []string{"AWS_PROFILE", "KUBECONFIG", "NO_PROXY"}; !slices.Equal(got, want) {
		t.Errorf("step a pass_env = %q, want the workflow's and its own, sorted and unique: %q", got, want)
	}
	if got, want := byName["b"].Action.Exec.PassEnv, []string{"AWS_PROFILE", "KUBECONFIG"}; !slices.Equal(got, want) {
		t.Errorf("step b pass_env = %q, want the workflow's: %q", got, want)
	}
	if got, want := g.Alerts[0].Action.Exec.PassEnv, []string{"AWS_PROFILE", "KUBECONFIG"}; !slices.Equal(got, want) {
		t.Errorf("alert pass_env = %q, want the workflow's: %q", got, want)
	}

	// The list is part of what the step does: its hash changes.
	base := passEnvGraph(t, passEnvBase)
	if byName["a"].Hash == base.Steps[0].Hash {
		t.Error("pass_env did not change the step's hash")
	}

	// It survives the store's codec, through both decoders.
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	for name, dec := range map[string]func([]byte) (*graph.Graph, error){
		"fast":      passEnvFastDecode,
		"reference": graph.DecodeReference,
	} {
		d, err := dec(b)
		if err != nil {
			t.Fatalf("%s decode: %v", name, err)
		}
		b2, err := graph.Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Errorf("%s decode changed the graph:\n%s\n%s", name, b, b2)
		}
	}
}

func TestPassEnvDecodeNormalizes(t *testing.T) {
	g := passEnvGraph(t, passEnvBase)
	g.Steps[0].Action.Exec.PassEnv = []string{"B", "A", "B"}
	g.Alerts[0].Action.Exec.PassEnv = []string{}
	b, err := graph.EncMarshal(g) // as written, not normalised
	if err != nil {
		t.Fatal(err)
	}
	for name, dec := range map[string]func([]byte) (*graph.Graph, error){
		"fast":      passEnvFastDecode,
		"reference": graph.DecodeReference,
	} {
		d, err := dec(b)
		if err != nil {
			t.Fatalf("%s decode: %v", name, err)
		}
		if got := d.Steps[0].Action.Exec.PassEnv; !slices.Equal(got, []string{"A", "B"}) {
			t.Errorf("%s decode: step pass_env = %q, want [A B]", name, got)
		}
		if got := d.Alerts[0].Action.Exec.PassEnv; got != nil {
			t.Errorf("%s decode: an empty alert pass_env = %#v, want nil", name, got)
		}
	}
}

func TestPassEnvValidateGraph(t *testing.T) {
	for _, name := range []string{"FLOWRUN_DB", "BAD-NAME", ""} {
		g := passEnvGraph(t, passEnvBase)
		g.Steps[0].Action.Exec.PassEnv = []string{name}
		err := graph.ValidateGraph(g)
		if err == nil || !strings.Contains(err.Error(), "pass_env") {
			t.Errorf("pass_env %q: ValidateGraph = %v, want an error naming pass_env", name, err)
		}
	}
}

func TestPassEnvAlertChangeIsPatch(t *testing.T) {
	old := passEnvGraph(t, passEnvBase)
	src := strings.Replace(passEnvBase, `exec { command = ["logger", "{{ run.id }}"] }`,
		`exec {
      command  = ["logger", "{{ run.id }}"]
      pass_env = ["SYSLOG_HOST"]
    }`, 1)
	new := passEnvGraph(t, src)
	changes := graph.Diff(old, new)
	if len(changes) != 1 || changes[0].String() != `alert "log" changed: PATCH` {
		t.Fatalf("changes = %v, want only the alert's, PATCH", changes)
	}
}

// passEnvFastDecode decodes with the fast decoder only, on one goroutine
// and split (Decode would fall back to the reference decoder on a field
// the fast one does not know).
func passEnvFastDecode(b []byte) (*graph.Graph, error) {
	var g *graph.Graph
	for _, sp := range []graph.FastSplit{{}, {Workers: 4, ChunkBytes: 1}} {
		var ok bool
		if g, ok = graph.DecodeFastSplit(b, graph.NewTypeInterner(), sp); !ok {
			return nil, fmt.Errorf("the fast decoder (split %+v) refused the graph", sp)
		}
	}
	return g, graph.ValidateGraph(g)
}
