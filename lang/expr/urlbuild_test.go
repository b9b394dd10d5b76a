package expr_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// urlProgram compiles a workflow whose step "h" has the http block body,
// with string inputs a, b and c, and returns its program and action.
func urlProgram(t *testing.T, httpBody string) (*expr.Program, *graph.HTTPAction) {
	t.Helper()
	src := `workflow "u" {
  version = "1.0.0"
  input "a" { type = string }
  input "b" { type = string }
  input "c" { type = string }
  secret "tok" { env = "TOK" }
  step "h" {
    http {
` + httpBody + `
    }
  }
}`
	m, diags := lang.LoadFile("u.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("compile: %s", diags)
	}
	g := m.Workflows[0].Graph
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	return p, g.Steps[0].Action.HTTP
}

func urlActivation(a, b, c string) *expr.Activation {
	return &expr.Activation{Input: map[string]any{"a": a, "b": b, "c": c}, Steps: map[string]expr.StepResult{},
		Secrets: map[string]string{"tok": "t/k n"}}
}

// TestEvalURLEscapes: each {{ }} value is escaped for the part of the URL
// it lands in; the reproduction cannot leave its path segment or
// its query value (fails on the code before: the values were pasted).
func TestEvalURLEscapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, a, b, c, want string
	}{
		{"issue reproduction", `url = "http://127.0.0.1:18080/items/{{ input.a }}?q={{ input.b }}"`,
			"../../admin/delete", "a&admin=1&user=root", "",
			"http://127.0.0.1:18080/items/..%2F..%2Fadmin%2Fdelete?q=a%26admin%3D1%26user%3Droot"},
		{"space", `url = "http://h/x/{{ input.a }}?q={{ input.b }}"`, "a b", "c d", "",
			"http://h/x/a%20b?q=c+d"},
		{"percent and hash", `url = "http://h/{{ input.a }}?{{ input.b }}={{ input.c }}"`, "50%#x", "k=#", "v?#",
			"http://h/50%25%23x?k%3D%23=v%3F%23"},
		{"fragment", `url = "http://h/p#{{ input.a }}"`, "a b#c/d", "", "",
			"http://h/p#a%20b%23c/d"},
		{"user information", `url = "http://{{ input.a }}:{{ secrets.tok }}@h/x"`, "u@s:r", "", "",
			"http://u%40s%3Ar:t%2Fk%20n@h/x"},
		{"host and port", `url = "http://{{ input.a }}.example:{{ input.b }}/x"`, "api", "8443", "",
			"http://api.example:8443/x"},
		{"base is raw", `url = "{{ input.a }}/items/{{ input.b }}"`, "http://h:1/v1?x=1", "a/b", "",
			"http://h:1/v1?x=1/items/a%2Fb"},
		{"after a raw base, by the base's layout", `url = "{{ input.a }}&n={{ input.b }}"`, "http://h/p?x=1", "a&b", "",
			"http://h/p?x=1&n=a%26b"},
		{"one value is the whole url", `url = "{{ input.a }}"`, "http://h/a b?c", "", "",
			"http://h/a%20b?c"},
		{"text that cannot stand in a URL is encoded, and a value's / stays escaped", `url = "http://h/a b/{{ input.a }}?x=<{{ input.b }}>#é"`, "/", " ", "",
			"http://h/a%20b/%2F?x=%3C+%3E#%C3%A9"},
		{"url.raw", `url = "http://h/{{ url.raw(input.a) }}?{{ url.raw(input.b) }}"`, "a/b", "x=1&y=2", "",
			"http://h/a/b?x=1&y=2"},
		{"escape functions", `url = "http://h/{{ url.raw(url.pathEscape(input.a) + '/' + url.queryEscape(input.b)) }}"`, "a/b", "c d", "",
			"http://h/a%2Fb/c+d"},
		{"a url.raw inside an expression escapes", `url = "http://h/{{ url.raw(input.a) + '' }}"`, "a/b", "", "",
			"http://h/a%2Fb"},
		{"query map", `url   = "http://h/x?a=1#f"
      query = { "b c" = "{{ input.a }}", n = 2, t = true }`, "x&y", "", "",
			"http://h/x?a=1&b+c=x%26y&n=2&t=true#f"},
		{"query map without a query", `url   = "http://h/x"
      query = { q = "{{ input.a }}" }`, "1 2", "", "",
			"http://h/x?q=1+2"},
		{"query map after a bare ?", `url   = "http://h/x?"
      query = { q = "{{ input.a }}" }`, "v", "", "",
			"http://h/x?q=v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, h := urlProgram(t, tc.body)
			got, err := p.EvalURL(context.Background(), h, urlActivation(tc.a, tc.b, tc.c))
			if err != nil {
				t.Fatalf("EvalURL: %v", err)
			}
			if got != tc.want {
				t.Fatalf("url = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEvalURLRefuses: values that would change where the host ends or
// stand in the scheme, and built URLs that are not http(s) with a host,
// are URLErrors that quote neither the URL nor the value.
func TestEvalURLRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, a, b, want string
	}{
		{"host with a slash", `url = "http://{{ input.a }}/x"`, "evil.example/a", "", "the value of {{ input.a }} cannot be in the url's host"},
		{"host with an at", `url = "http://{{ input.a }}/x"`, "good@evil.example", "", "the value of {{ input.a }} cannot be in the url's host"},
		{"host with a space", `url = "http://h{{ input.a }}/x"`, ".x y", "", "cannot be in the url's host"},
		{"scheme after a base", `url = "{{ input.a }}t{{ input.b }}://h/x"`, "h", "tps", "the value of {{ input.b }} would be part of the url's scheme"},
		{"base not http", `url = "{{ input.a }}/x"`, "file:///etc", "", "its scheme is not http or https"},
		{"base without host", `url = "{{ input.a }}/x"`, "nothing", "", "not an absolute URL"},
		{"whole url without host", `url = "{{ input.a }}"`, "http:///x", "", "it has no host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, h := urlProgram(t, tc.body)
			got, err := p.EvalURL(context.Background(), h, urlActivation(tc.a, tc.b, ""))
			var ue *expr.URLError
			if !errors.As(err, &ue) {
				t.Fatalf("EvalURL = %q, %v; want a URLError", got, err)
			}
			if !strings.Contains(ue.Msg, tc.want) {
				t.Fatalf("error = %q, want it to contain %q", ue.Msg, tc.want)
			}
			for _, v := range []string{tc.a, tc.b} {
				if len(v) > 3 && strings.Contains(ue.Msg, v) {
					t.Fatalf("error %q quotes the value %q", ue.Msg, v)
				}
			}
		})
	}
}

// TestURLEscapeFunctions: url.pathEscape and url.queryEscape are
// net/url's, url.raw is the identity.
func TestURLEscapeFunctions(t *testing.T) {
	t.Parallel()
	p, h := urlProgram(t, `url  = "http://h/"
      body = { p = "{{ url.pathEscape(input.a) }}", q = "{{ url.queryEscape(input.a) }}", r = "{{ url.raw(input.a) }}" }`)
	v := "a/b c&d=e?f#g%"
	got, err := p.EvalValue(context.Background(), h.Body, urlActivation(v, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	if m["p"] != url.PathEscape(v) || m["q"] != url.QueryEscape(v) || m["r"] != v {
		t.Fatalf("got %v", m)
	}
}

// TestHTTPNewAttributesKeepHash: a graph without query and
// follow_redirects encodes as before (no new keys), follow_redirects =
// true is the default and the same graph, and adding query or turning
// redirects off is a MINOR change of the http parameters.
func TestHTTPNewAttributesKeepHash(t *testing.T) {
	t.Parallel()
	compile := func(body string) *graph.Graph {
		m, diags := lang.LoadFile("u.hcl", []byte(`workflow "u" {
  version = "1.0.0"
  step "h" {
    http {
      url = "http://h/x"
`+body+`
    }
  }
}`))
		if diags.HasErrors() {
			t.Fatalf("compile: %s", diags)
		}
		return m.Workflows[0].Graph
	}
	plain, follow := compile(""), compile("follow_redirects = true")
	b, err := graph.Encode(plain)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "query") || strings.Contains(s, "redirects") {
		t.Fatalf("the encoding of a graph without the new attributes names them: %s", s)
	}
	h1, _ := graph.Hash(plain)
	h2, _ := graph.Hash(follow)
	if h1 != h2 {
		t.Fatalf("follow_redirects = true changed the hash")
	}
	for body, what := range map[string]string{
		`query = { a = "1" }`:      "http parameters changed (query)",
		"follow_redirects = false": "http parameters changed (no_redirects)",
	} {
		changes := graph.Diff(plain, compile(body))
		if len(changes) != 1 || changes[0].What != what || changes[0].Bump != graph.BumpMinor {
			t.Errorf("%s: changes = %v, want one MINOR %q", body, changes, what)
		}
		// And it goes through the store's encoding both ways.
		g := compile(body)
		enc, err := graph.Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := graph.Decode(enc)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if graph.Diff(g, dec) != nil {
			t.Errorf("%s: lost in encoding: %v", body, graph.Diff(g, dec))
		}
	}
}
