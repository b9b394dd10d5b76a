package interp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestRedactorScalars: a number or boolean whose text holds a secret is
// replaced by its text with the secret as *** (a string); others stay
// numbers and booleans.
func TestRedactorScalars(t *testing.T) {
	r := newRedactor(map[string]string{"pin": "48213", "word": "truest", "exp": "1e+22"})
	for _, tc := range []struct {
		in   any
		want string // JSON of the redacted value
	}{
		{48213.0, `"***"`},
		{4821300.0, `"***00"`},
		{-48213.5, `"-***.5"`},
		{4.8213e25, `"***000000000000000000000"`}, // JSON writes 4.8213e+25
		{1e22, `"***"`},                           // JSON writes 1e+22
		{48214.0, `48214`},
		{true, `true`},
		{[]any{48213.0, "a48213", map[string]any{"48213": 1.0}}, `["***","a***",{"***":1}]`},
	} {
		if got := string(r.json(tc.in)); got != tc.want {
			t.Errorf("json(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
	b := newRedactor(map[string]string{"flag": "true"})
	if got := string(b.json(map[string]any{"on": true, "off": false})); got != `{"off":false,"on":"***"}` {
		t.Errorf("a secret true: %s", got)
	}
}

// TestRedactorSeal: a secret that no single string, key or number holds
// but the JSON encoding does (it spans several values, or JSON's escaping
// makes it) is redacted in the encoding: the smallest part that holds it
// becomes a string.
func TestRedactorSeal(t *testing.T) {
	for _, tc := range []struct {
		secret string
		in     any
		want   string
	}{
		{"1,2,3,4", map[string]any{"a": []any{1.0, 2.0, 3.0, 4.0, 5.0}, "b": "ok"}, `{"a":"[***,5]","b":"ok"}`},
		{`"b":"c`, map[string]any{"x": map[string]any{"a": "c", "b": "c"}}, `{"x":"{\"a\":\"c\",***\"}"}`},
		{"n1234567", map[string]any{"s": "\n1234567", "t": "ok"}, `{"s":"***","t":"ok"}`},
		{"n1234567", map[string]any{"\n1234567": 1.0}, `{"***":1}`},
	} {
		r := newRedactor(map[string]string{"s": tc.secret})
		got := r.json(tc.in)
		if string(got) != tc.want {
			t.Errorf("secret %q: json = %s, want %s", tc.secret, got, tc.want)
		}
		if strings.Contains(string(got), tc.secret) {
			t.Errorf("secret %q is in %s", tc.secret, got)
		}
		if c := mustJSON(r.clean(tc.in)); string(c) != tc.want {
			t.Errorf("secret %q: clean = %s, want %s", tc.secret, c, tc.want)
		}
	}
}

// TestRedactorTransition: whatever a transition would store that holds a
// secret is redacted at the boundary, also when the place that built it
// did not redact it; a step's State is flowrun's and is left alone.
func TestRedactorTransition(t *testing.T) {
	r := newRedactor(map[string]string{"pin": "48213907"})
	raw := json.RawMessage(`{"n":48213907,"s":"x48213907"}`)
	tr := store.Transition{
		Run:         &store.RunUpdate{Outputs: raw, Error: raw, WaitReason: ptr("on 48213907")},
		Steps:       []store.StepWrite{{Key: "a", Output: raw, Error: raw, Detail: "48213907", State: json.RawMessage(`{"delay_ms":48213907}`)}},
		Attempts:    []store.AttemptWrite{{StepKey: "a", Output: raw, Error: raw, IdempotencyKey: "k48213907"}},
		Events:      []store.EventWrite{{Kind: "k", Data: raw}},
		Children:    []store.RunInsertParams{{Inputs: raw}},
		DeadLetters: []store.DeadLetterWrite{{Item: json.RawMessage(`48213907`), Error: raw}},
		Alerts:      []store.AlertWrite{{Message: "m 48213907"}},
	}
	r.transition(&tr)
	state := string(tr.Steps[0].State)
	tr.Steps[0].State = nil
	b, _ := json.Marshal(tr)
	if strings.Contains(string(b), "48213907") {
		t.Errorf("the transition still holds the secret: %s", b)
	}
	if got := string(tr.Steps[0].Output); got != `{"n":"***","s":"x***"}` {
		t.Errorf("step output = %s", got)
	}
	if got := string(tr.DeadLetters[0].Item); got != `"***"` {
		t.Errorf("dead letter item = %s", got)
	}
	if state != `{"delay_ms":48213907}` {
		t.Errorf("state changed: %s", state)
	}
	clean := json.RawMessage(`{"n":1}`)
	if got := r.raw(clean); &got[0] != &clean[0] {
		t.Error("raw copied JSON that holds no secret")
	}
}

// TestSecretComputedValues: a value that equals a secret is stored as ***
// also when flowrun computed it without seeing the secret (set, foreach
// items, a child's inputs and so its outputs, the run's outputs), and what
// later steps read is what was stored.
func TestSecretComputedValues(t *testing.T) {
	b := setup(t)
	b.env["PIN"] = "48213907"
	b.compile(`
workflow "child" {
  version = "1.0.0"
  input "n" { type = any }
  step "echo" {
    set { got = "{{ input.n }}" }
  }
  output "got" { value = "{{ steps.echo.output.got }}" }
}`)
	gs := b.compile(`
workflow "s" {
  version = "1.0.0"
  secret "pin" { env = "PIN" }
  step "calc" {
    set {
      n = "{{ 48213000 + 907 }}"
      s = "{{ 'pin ' + string(48213000 + 907) }}"
    }
  }
  step "each" {
    foreach { items = "[48213000.0 + 907.0, 1.0]" }
    set { item = "{{ item }}" }
  }
  step "kid" {
    workflow {
      name    = "child"
      version = "1"
      input    = { n = "{{ 48213000 + 907 }}" }
    }
  }
  step "use" {
    depends_on = [step.calc, step.each, step.kid]
    set { copied = "{{ steps.calc.output.n }}" }
  }
  output "n" { value = "{{ 48213000 + 907 }}" }
}`)
	run := b.drive(b.start(gs[0].Workflow, nil).ID)
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	wantJSON(t, "calc", v.Steps["calc"].Output, `{"n": "***", "s": "pin ***"}`)
	wantJSON(t, "each", v.Steps["each"].Output, `[{"item": "***"}, {"item": 1}]`)
	wantJSON(t, "use", v.Steps["use"].Output, `{"copied": "***"}`)
	wantJSON(t, "outputs", v.Outputs, `{"n": "***"}`)
	wantNoLeak(t, b, run.ID, "48213907")
	kid := v.Steps["kid"]
	wantJSON(t, "kid", kid.Output, `{"got": "***"}`)
	runs, err := b.st.RunList(b.ctx, store.RunListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID != run.ID {
			wantNoLeak(t, b, r.ID, "48213907")
		}
	}
}

// TestSecretLongNumber: a secret of more digits than a float64 keeps
// (a 16- to 20-digit card or account number), printed as a JSON number by
// a program or a server, is redacted by the number's text as written: as a
// float64 it would be rounded to digits that no longer hold the secret but
// still give most of it away.
func TestSecretLongNumber(t *testing.T) {
	const secret = "12345678901234567891" // odd and past 2^53: not a float64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"n": %s, "more": %s3, "list": [%s.5]}`, secret, secret, secret)
	}))
	defer srv.Close()
	b := setup(t)
	b.env["ACCT"] = secret
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  input "base" { type = string }
  secret "acct" { env = "ACCT" }
  step "prog" {
    exec {
      command = ["sh", "-c", "printf '{\"n\": %s, \"more\": %s3, \"list\": [%s.5]}' \"$A\" \"$A\" \"$A\""]
      env     = { A = "{{ secrets.acct }}" }
    }
  }
  step "web" {
    http {
      url     = "{{ input.base }}/x"
      headers = { X-Acct = "{{ secrets.acct }}" }
    }
  }
}`, map[string]any{"base": srv.URL})
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	want := `{"list": ["***.5"], "more": "***3", "n": "***"}`
	wantJSON(t, "prog json", mustJSON(jsonOf(t, v.Steps["prog"].Output).(map[string]any)["json"]), want)
	wantJSON(t, "web body", mustJSON(jsonOf(t, v.Steps["web"].Output).(map[string]any)["body"]), want)
	wantNoLeak(t, b, run.ID, secret, secret[:15])
}

// TestRedactorOtherJSONEncoders: a secret in a JSON string as Python's
// json.dumps (ASCII, surrogate pairs) or PHP's json_encode (also \/)
// writes it is redacted in text such as a program's stdout.
func TestRedactorOtherJSONEncoders(t *testing.T) {
	r := newRedactor(map[string]string{"s": "pä/ss😀wörd"})
	for _, text := range []string{
		`{"tok": "p\u00e4/ss\ud83d\ude00w\u00f6rd"}`, // Python
		`{"tok":"p\u00e4\/ss\ud83d\ude00w\u00f6rd"}`, // PHP
		`{"tok":"p\u00E4/ss\uD83D\uDE00w\u00F6rd"}`,  // upper-case hex
		`{"tok":"pä\/ss😀wörd"}`,                      // / escaped only
	} {
		got := r.text(text)
		if !strings.Contains(got, `"***"`) {
			t.Errorf("text(%s) = %s, want the secret as ***", text, got)
		}
		var v map[string]string
		if err := json.Unmarshal([]byte(text), &v); err != nil || v["tok"] != "pä/ss😀wörd" {
			t.Fatalf("the case %s is not the secret in JSON: %v %q", text, err, v["tok"])
		}
	}
}

// TestRedactorOtherURLEncoders: a secret as Python's quote, quote_plus and
// JavaScript's encodeURIComponent percent-encode it (net/url keeps = : @ &
// unescaped in a path) is redacted in text.
func TestRedactorOtherURLEncoders(t *testing.T) {
	r := newRedactor(map[string]string{"s": "a=b:c@d/e f&g'ü"})
	for _, text := range []string{
		"/cb?x=a%3Db%3Ac%40d/e%20f%26g%27%C3%BC",   // quote(s)
		"x=a%3Db%3Ac%40d%2Fe+f%26g%27%C3%BC",       // quote_plus(s)
		"x=a%3Db%3Ac%40d%2Fe%20f%26g'%C3%BC",       // encodeURIComponent(s)
		"x=a%3Db%3Ac%40d%2Fe%20f%26g%27%C3%BC&y=1", // quote(s, safe='')
	} {
		if got := r.text(text); !strings.Contains(got, "***") || strings.Contains(got, "%3Db") {
			t.Errorf("text(%s) = %s, want the secret as ***", text, got)
		}
	}
}

// TestExecMultilineSecretLastLine: the error of a failed program quotes
// the last line of its stderr; when that is the end of a secret of several
// lines (a key in PEM), the line alone is no form of the secret, so the
// text is redacted before the line is taken.
func TestExecMultilineSecretLastLine(t *testing.T) {
	const secret = "-----BEGIN KEY-----\nZk9firstLINE\nZk9secondLINE"
	b := setup(t)
	b.env["KEY"] = secret
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  secret "key" { env = "KEY" }
  step "p" {
    exec {
      command = ["sh", "-c", "printf 'using\n%s\n' \"$K\" >&2; exit 3"]
      env     = { K = "{{ secrets.key }}" }
    }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	if msg, want := stepMessage(t, b, run.ID, "p"), `command "sh" exited with status 3: ***`; msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	wantNoLeak(t, b, run.ID, secret, "Zk9", "LINE")
}

// TestRedactorTrimmedSecret: a secret whose value has white space around
// it (a line break at the end of a file it was read from) is redacted also
// as a program that trims it prints it.
func TestRedactorTrimmedSecret(t *testing.T) {
	r := newRedactor(map[string]string{"s": "  tok-48213907\n"})
	if got := r.text(`token="tok-48213907" n=48213907`); got != `token="***" n=48213907` {
		t.Errorf("text = %q", got)
	}
	if got := string(r.json(map[string]any{"t": "tok-48213907"})); got != `{"t":"***"}` {
		t.Errorf("json = %s", got)
	}
}
