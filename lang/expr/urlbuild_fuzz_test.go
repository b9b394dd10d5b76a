package expr_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
)

// FuzzBuildURL builds
//
//	SCHEME://user:{{ pass }}@HOST/SEG/{{ v1 }}/tail?q={{ v2 }}&k=1#{{ v3 }}
//
// from a fuzzed literal host and path segment and fuzzed values. Whenever
// the template's text makes a URL (it builds with placeholder values), the
// invariants are: it builds with any values but a v1 of . or .. (refused,
// as a dot segment); the result parses; its scheme
// and host are the template's; v1 comes back as exactly one path segment,
// v2 as the one value of q (and k stays the only other parameter), v3 as
// the fragment and pass as the password. A host value either is refused
// or is the host, placed as it is.
func FuzzBuildURL(f *testing.F) {
	f.Add(false, "127.0.0.1:18080", "items", "../../admin/delete", "a&admin=1&user=root", "", "pw", "api")
	f.Add(true, "example.com", "a b", "a b", "c d", "e f", "p@ss:w/rd", "x.example:8443")
	f.Add(false, "h", "%41", "%zz", "%", "#", "", "evil.example/a")
	f.Add(true, "[::1]:80", "x", "\x00\xff", "k=1&q=2", "a#b?c", "@", "a@b")
	f.Fuzz(func(t *testing.T, https bool, host, seg, v1, v2, v3, pass, hostValue string) {
		if strings.ContainsAny(host+seg, "/?#@") {
			return // the text itself would move the parts: the author's text, not a value
		}
		scheme := "http"
		if https {
			scheme = "https"
		}
		pieces := func(pass, v1, v2, v3 string) []expr.URLPiece {
			return []expr.URLPiece{
				{Text: scheme + "://user:"}, {Text: pass, Escape: true, Expr: "pass"},
				{Text: "@" + host + "/" + seg + "/"}, {Text: v1, Escape: true, Expr: "v1"},
				{Text: "/tail?q="}, {Text: v2, Escape: true, Expr: "v2"},
				{Text: "&k=1#"}, {Text: v3, Escape: true, Expr: "v3"},
			}
		}
		shape, err := expr.BuildURL(pieces("p", "1", "2", "3"))
		if err != nil {
			return // the literal text makes no URL: refused at compile time
		}
		su, err := url.Parse(shape)
		if err != nil {
			t.Fatalf("BuildURL returned %q, which does not parse: %v", shape, err)
		}
		got, err := expr.BuildURL(pieces(pass, v1, v2, v3))
		if v1 == "." || v1 == ".." {
			// A whole segment of dots is refused: a client or server would
			// resolve it and send the request to another path.
			if err == nil || !strings.Contains(err.Error(), "a . or .. segment") {
				t.Fatalf("the path value %q built %q (err %v), want it refused as a dot segment", v1, got, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("the template builds with placeholders but not with values %q %q %q %q: %v", pass, v1, v2, v3, err)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("built %q, which does not parse: %v", got, err)
		}
		if u.Scheme != scheme || u.Host != su.Host {
			t.Fatalf("built %q: scheme %q host %q, want %q %q", got, u.Scheme, u.Host, scheme, su.Host)
		}
		segs := strings.Split(u.EscapedPath(), "/")
		if len(segs) != 4 || segs[3] != "tail" {
			t.Fatalf("built %q: path segments %q, want 4 ending in tail", got, segs)
		}
		if s, err := url.PathUnescape(segs[2]); err != nil || s != v1 {
			t.Fatalf("built %q: segment %q unescapes to %q (%v), want %q", got, segs[2], s, err, v1)
		}
		q := u.Query()
		if len(q) != 2 || len(q["q"]) != 1 || q.Get("q") != v2 || q.Get("k") != "1" {
			t.Fatalf("built %q: query %v, want q=%q and k=1", got, q, v2)
		}
		if u.Fragment != v3 {
			t.Fatalf("built %q: fragment %q, want %q", got, u.Fragment, v3)
		}
		if p, _ := u.User.Password(); u.User.Username() != "user" || p != pass {
			t.Fatalf("built %q: user %q password %q, want user %q", got, u.User.Username(), p, pass)
		}

		// A value in the host is placed as it is, or refused.
		hu, err := expr.BuildURL([]expr.URLPiece{{Text: scheme + "://"}, {Text: hostValue, Escape: true, Expr: "h"}, {Text: "/x?y=1"}})
		var ue *expr.URLError
		switch {
		case err == nil:
			u, perr := url.Parse(hu)
			if perr != nil || u.Host != hostValue || u.Path != "/x" || u.RawQuery != "y=1" || u.User != nil {
				t.Fatalf("host value %q built %q: host %q path %q query %q (%v)", hostValue, hu, u.Host, u.Path, u.RawQuery, perr)
			}
		case !errors.As(err, &ue):
			t.Fatalf("host value %q: error %v is not a URLError", hostValue, err)
		case len(hostValue) > 3 && strings.ContainsAny(hostValue, "0123456789") && strings.Contains(ue.Msg, hostValue):
			t.Fatalf("host value %q: the error quotes it: %s", hostValue, ue.Msg)
		}
	})
}

// FuzzURLTemplate compiles an http action whose url is the fuzzed
// template text and evaluates it with the fuzzed value for every input.
// The invariants: no panic; the compile-time check and the run agree (a
// url that compiles and starts with text builds when every value is "1",
// the placeholder the check uses); a url that builds is an absolute http
// or https URL with a host, whose scheme is the template's literal one
// when the template starts with text.
func FuzzURLTemplate(f *testing.F) {
	f.Add("http://127.0.0.1:18080/items/{{ input.a }}?q={{ input.b }}", "../../admin/delete")
	f.Add("{{ input.a }}/x/{{ input.b }}", "http://h/p?q=1")
	f.Add("https://{{ input.a }}:{{ input.b }}/x#{{ input.a }}", "h")
	f.Add("http://u:{{ input.a }}@h/{{ url.raw(input.b) }}", "a b/c?d#e")
	f.Add("HTTP://h/{{ input.a }}{{ input.b }}?{{ input.a }}={{ input.b }}", "%zz")
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		if strings.ContainsAny(tmpl, "\"\\\n\r") || strings.Contains(tmpl, "${") || strings.Contains(tmpl, "%{") {
			return // keep to what an HCL quoted string holds as written
		}
		src := `workflow "u" {
  version = "1.0.0"
  input "a" { type = string }
  input "b" { type = string }
  step "h" {
    http { url = "` + tmpl + `" }
  }
}`
		m, diags := lang.LoadFile("u.hcl", []byte(src))
		if diags.HasErrors() || len(m.Workflows) == 0 || m.Workflows[0].Graph == nil {
			return
		}
		g := m.Workflows[0].Graph
		p, err := expr.Load(g)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		h := g.Steps[0].Action.HTTP
		eval := func(v string) (string, error) {
			return p.EvalURL(context.Background(), h, &expr.Activation{Input: map[string]any{"a": v, "b": v}, Steps: map[string]expr.StepResult{}})
		}
		startsWithText := h.URL.Lit != nil || (h.URL.Template != nil && h.URL.Template.Parts[0].Expr == nil)
		raw := false
		if h.URL.Template != nil {
			for _, pt := range h.URL.Template.Parts {
				raw = raw || (pt.Expr != nil && expr.RawURLExpr(pt.Expr.CEL))
			}
		}
		if startsWithText && !raw {
			if _, err := eval("1"); err != nil {
				t.Fatalf("%q compiles but does not build with every value 1: %v", tmpl, err)
			}
		}
		got, err := eval(value)
		if err != nil {
			var ue *expr.URLError
			// (a value with a digit: the messages' own words have none)
			if errors.As(err, &ue) && len(value) > 3 && strings.ContainsAny(value, "0123456789") && strings.Contains(ue.Msg, value) {
				t.Fatalf("the error quotes the value %q: %s", value, ue.Msg)
			}
			return
		}
		if err := expr.CheckHTTPURL(got); err != nil {
			t.Fatalf("%q built %q, which is not an http URL with a host: %v", tmpl, got, err)
		}
		if startsWithText {
			u, _ := url.Parse(got)
			lit := tmpl
			if i := strings.Index(lit, "://"); i >= 0 && !strings.EqualFold(u.Scheme, lit[:i]) {
				t.Fatalf("%q built %q: scheme %q, not the template's", tmpl, got, u.Scheme)
			}
		}
	})
}
