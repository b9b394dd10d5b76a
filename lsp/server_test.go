package lsp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

const featureDoc = `workflow "w" {
  version = "1.0.0"
  input "amount" {
    type    = number
    default = 5
  }
  secret "tok" { env = "TOK" }
  breaker "pay" {
    failures = 3
    cooldown = "30s"
  }
  step "list" {
    exec { command = ["ls"] }
  }
  step "charge" {
    when       = "input.amount > 0 && size(steps.list.output.stdout) > 0"
    depends_on = [step.list]
    breaker    = breaker.pay
    retry {
      attempts = 3
    }
    http {
      url     = "https://x/{{ steps.list.output.stdout }}"
      headers = { A = "{{ secrets.tok }}" }
    }
  }
  step "after" {
    set { u = "{{ steps.charge.output.request.url }}" }
  }
}
`

// openFeatureDoc is a server with featureDoc open.
func openFeatureDoc(t *testing.T, text string) (*server, *document) {
	t.Helper()
	s := newTestServer(t, io.Discard)
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": text}}})
	mustHandle(t, s, open)
	d := s.docs[fuzzURI]
	if d.mod == nil || len(d.diags) != 0 {
		t.Fatalf("the document does not compile: %v", d.diags)
	}
	return s, d
}

func offsetOf(t *testing.T, text, marker string, n int) int {
	t.Helper()
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("%q not in the text", marker)
	}
	return i + n
}

func labels(l *CompletionList) string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Label)
	}
	return strings.Join(out, " ")
}

func TestCompletionKinds(t *testing.T) {
	s, d := openFeatureDoc(t, featureDoc)
	for _, tc := range []struct {
		name, marker string
		n            int
		has, hasNot  []string
	}{
		{"roots and functions at the start of a control expression", `"input.amount > 0`, 1, []string{"input", "run", "steps", "size", "int"}, []string{"secrets", "item", "error"}},
		{"inputs after input.", `input.amount > 0`, 6, []string{"amount"}, []string{"tok"}},
		{"input prefix", `input.amount > 0`, 8, []string{"amount"}, nil},
		{"secrets in exec/http data", `secrets.tok`, 8, []string{"tok"}, nil},
		{"output fields", `steps.list.output.stdout }}`, 18, []string{"exit_code", "stdout", "stderr", "json"}, []string{"status"}},
		{"step result fields", `steps.list.output.stdout }}`, 11, []string{"output", "status", "attempts", "error"}, nil},
		{"http output fields", `steps.charge.output.request.url }}`, 20, []string{"status", "headers", "body", "request"}, []string{"stdout"}},
		{"http request fields", `steps.charge.output.request.url }}`, 28, []string{"method", "url", "headers"}, []string{"status"}},
		{"static step reference", `[step.list]`, 6, []string{"list", "charge"}, nil},
		{"static breaker reference", `breaker.pay`, 8, []string{"pay"}, nil},
		{"attribute names in retry", "      attempts = 3", 6, []string{"attempts", "backoff", "when"}, []string{"command"}},
		{"block names in a step", "    retry {", 4, []string{"retry", "exec", "foreach", "when"}, []string{"version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := labels(s.complete(d, offsetOf(t, featureDoc, tc.marker, tc.n)))
			words := " " + got + " "
			for _, w := range tc.has {
				if !strings.Contains(words, " "+w+" ") {
					t.Errorf("%q missing from %q", w, got)
				}
			}
			for _, w := range tc.hasNot {
				if strings.Contains(words, " "+w+" ") {
					t.Errorf("%q proposed in %q", w, got)
				}
			}
		})
	}
}

func TestHoverKinds(t *testing.T) {
	s, d := openFeatureDoc(t, featureDoc)
	for _, tc := range []struct {
		name, marker string
		n            int
		want         string
	}{
		{"function", "size(steps", 1, "function **size**"},
		{"input reference", "input.amount >", 8, "input **amount**: **number**\n\ndefault: `5`"},
		{"secret reference", "secrets.tok", 9, "environment variable: `TOK`"},
		{"static step", "[step.list]", 7, "step **list** (exec)"},
		{"static breaker", "breaker.pay\n", 9, "breaker **pay**"},
		{"attribute doc with its spec row", "      attempts = 3", 8, "**attempts**: number (whole) (default: `1` (no retry))"},
		{"block doc", "    retry {", 5, "Retry policy"},
		{"whole template expression", `{{ steps.list.output.stdout }}`, 2, "expression of type **string**"},
		{"input block header", `input "amount"`, 2, "input **amount**: **number**"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := s.hover(context.Background(), d, offsetOf(t, featureDoc, tc.marker, tc.n))
			if h == nil || !strings.Contains(h.Contents.Value, tc.want) {
				t.Fatalf("hover: %+v, want %q in it", h, tc.want)
			}
		})
	}
}

func TestDefinitionKinds(t *testing.T) {
	_, d := openFeatureDoc(t, featureDoc)
	for _, tc := range []struct {
		name, marker string
		n            int
		target       string
	}{
		{"steps.X in a control expression", "steps.list.output.stdout)", 7, `"list"`},
		{"step.X", "[step.list]", 6, `"list"`},
		{"breaker.X", "breaker.pay\n", 9, `"pay"`},
		{"input.X", "input.amount >", 7, `"amount"`},
		{"secrets.X", "secrets.tok", 9, `"tok"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locs := definition(d, offsetOf(t, featureDoc, tc.marker, tc.n))
			want := d.text.position(offsetOf(t, featureDoc, tc.target, 0))
			if len(locs) != 1 || locs[0].Range.Start != want {
				t.Fatalf("definition: %+v, want %+v", locs, want)
			}
		})
	}
	if locs := definition(d, offsetOf(t, featureDoc, "https://x", 3)); locs != nil {
		t.Fatalf("definition on literal text: %+v", locs)
	}
}

// While an expression is half typed (it does not compile), completion
// uses the last graph that compiled: member functions after a string.
func TestCompletionWhileTyping(t *testing.T) {
	s, d := openFeatureDoc(t, featureDoc)
	typing := strings.Replace(featureDoc, "size(steps.list.output.stdout)", "steps.list.output.stdout.tr", 1)
	var p didChangeParams
	p.TextDocument.URI, p.TextDocument.Version = fuzzURI, 2
	p.ContentChanges = []contentChange{{Text: typing}}
	if err := s.change(p); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(d.diags) == 0 {
		t.Fatal("the half-typed expression compiles")
	}
	got := labels(s.complete(d, offsetOf(t, typing, "stdout.tr", 9)))
	if !strings.Contains(" "+got+" ", " trim ") || strings.Contains(got, "size") {
		t.Fatalf("completion after a string's dot with prefix tr: %q", got)
	}
}

// A document first opened with an error (no earlier graph) still gets
// member completion and hover for the steps that compile: the steps that
// hold an error are left out of a second compile (salvage.go). The
// diagnostics stay those of the real compile.
func TestCompletionFirstOpenedBroken(t *testing.T) {
	const broken = `workflow "w" {
  version = "1.0.0"
  input "amount" { type = number }
  step "price" {
    set {
      total = "{{ input.amount * 2 }}"
      label = "x"
    }
  }
  step "bad" {
    set { v = "{{ nosuchfunc(1) }}" }
  }
  step "use" {
    set { t = "{{ steps.price.output. }}" }
  }
}
`
	s := newTestServer(t, io.Discard)
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": broken}}})
	mustHandle(t, s, open)
	d := s.docs[fuzzURI]
	if len(d.diags) == 0 {
		t.Fatal("the broken document has no diagnostics")
	}
	got := labels(s.complete(d, offsetOf(t, broken, "steps.price.output. ", 19)))
	if !strings.Contains(" "+got+" ", " total ") || !strings.Contains(" "+got+" ", " label ") {
		t.Fatalf("member completion of steps.price.output in a document first opened broken: %q", got)
	}
}

// A document first opened with a mistake outside every step (a cron
// expression, a webhook, an alert, an output) still gets hover and
// completion in its steps: salvage leaves the block with the error out as
// it leaves out a step. Before, only steps were left out, so one wrong
// cron field took hover and completion from the whole document.
func TestHoverFirstOpenedBrokenOutsideSteps(t *testing.T) {
	for _, bad := range []string{
		`schedule "nightly" { cron = "0 25 * * *" }`,
		`webhook "push" { secret = secret.nosuch }`,
		`alert "ops" {
    on   = ["crashed"]
    exec { command = ["true"] }
  }`,
		`output "o" { value = "{{ steps.price.output.nosuch }}" }`,
	} {
		broken := `workflow "w" {
  version = "1.0.0"
  input "amount" { type = number }
  step "price" {
    set { total = "{{ input.amount * 2 }}" }
  }
  step "use" {
    set { t = "{{ steps.price.output.total }}" }
  }
  ` + bad + `
}
`
		s := newTestServer(t, io.Discard)
		open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
			"params": map[string]any{"textDocument": map[string]any{"uri": fuzzURI, "languageId": "hcl", "version": 1, "text": broken}}})
		mustHandle(t, s, open)
		d := s.docs[fuzzURI]
		if len(d.diags) == 0 {
			t.Fatalf("%s: the broken document has no diagnostics", bad)
		}
		h := s.hover(context.Background(), d, offsetOf(t, broken, "output.total", 8))
		if h == nil || !strings.Contains(h.Contents.Value, "number") {
			t.Errorf("%s: hover on steps.price.output.total: %+v, want its type (number)", bad, h)
		}
		if got := labels(s.complete(d, offsetOf(t, broken, "output.total", 7))); !strings.Contains(" "+got+" ", " total ") {
			t.Errorf("%s: completion after steps.price.output.: %q", bad, got)
		}
	}
}
