package lang

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// jsonWhole is the reference decodeFast must agree with: encoding/json
// decoding the whole record strictly (one value, nothing after it), then
// the normal form; no validation, which Decode applies to both.
func jsonWhole(b []byte) (*Graph, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var g Graph
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	encNormalize(&g, true)
	return &g, nil
}

// checkFast decodes b with decodeFast and the reference decoders. When the
// fast decoder takes b, the reference must too and give a deep-equal graph;
// Decode must give what decodeReference (the encoding/json path) gives:
// an equal graph or the same error text. It reports whether the fast
// decoder took b.
func checkFast(t testing.TB, b []byte) bool {
	t.Helper()
	g, ok := decodeFast(b, newTypeInterner())
	if ok {
		ref, err := jsonWhole(b)
		if err != nil {
			t.Fatalf("the fast decoder took %.2000q, encoding/json rejects it: %v", b, err)
		}
		if !reflect.DeepEqual(g, ref) {
			got, _ := json.Marshal(g)
			want, _ := json.Marshal(ref)
			t.Fatalf("the fast decoder gives\n%s\nencoding/json\n%s\nfor %q", got, want, b)
		}
	}
	dg, derr := Decode(b)
	rg, rerr := decodeReference(b)
	switch {
	case (derr == nil) != (rerr == nil):
		t.Fatalf("Decode error %v, reference error %v, for %.2000q", derr, rerr, b)
	case derr != nil && derr.Error() != rerr.Error():
		t.Fatalf("Decode error\n%v\nreference error\n%v\nfor %.2000q", derr, rerr, b)
	case derr == nil && !reflect.DeepEqual(dg, rg):
		t.Fatalf("Decode and the reference decode differ for %.2000q", b)
	}
	return ok
}

// checkStored checks that the fast decoder takes a stored graph, gives what
// the reference whole decode gives, and that the result encodes to the
// same bytes.
func checkStored(t *testing.T, g *Graph) {
	t.Helper()
	b, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	if !checkFast(t, b) {
		t.Fatalf("the fast decoder does not take the stored graph %s", b)
	}
	fast, _ := decodeFast(b, newTypeInterner())
	ref, err := decodeWhole(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, ref) {
		t.Fatal("the fast decoder and decodeWhole differ")
	}
	if again, err := Encode(fast); err != nil || !bytes.Equal(again, b) {
		t.Fatalf("the fast decode encodes to\n%s\nnot\n%s (%v)", again, b, err)
	}
	dg, err := Decode(b)
	if err != nil || !reflect.DeepEqual(dg, ref) {
		t.Fatalf("Decode: %v", err)
	}
}

// irEvery extends irFull with what it leaves out: a breaker's on_open, a
// sleep duration, literals and templates with escapes and non-ASCII text,
// nested lists, objects and types, an object default, several alerts.
func irEvery(t testing.TB) *Graph {
	t.Helper()
	g := irFull(t)
	g.Breakers[0].OnOpen = "fail"
	g.Breakers = append(g.Breakers, Breaker{Name: "slow", Failures: 1, CooldownMS: 1})
	g.Inputs = append(g.Inputs, Input{Name: "opts", Type: ObjectOf(map[string]*Type{"a": ListOf(TypeInt), "b": TypeString}),
		Default: json.RawMessage(`{"b":"x\u00e9\"\\","a":[1,-2,3.5e-7]}`)})
	nap := irStep("nap", Action{Kind: KindSleep, Sleep: &SleepAction{DurationMS: 5000}})
	nap.Breaker = "slow"
	nested := ObjectOf(map[string]*Type{"l": ListOf(MapOf(ObjectOf(map[string]*Type{"é": TypeInt, "k\"q": TypeNull}))), "o": ObjectOf(map[string]*Type{})})
	texts := irStep("étape 😀", irSet(map[string]*Value{
		"quote": irLit("a\"b\\c\n\t\u00e9 😀 <&> \u2028 \x7f /", TypeString),
		"obj":   irLit(map[string]any{"z": 1, "a": []any{1.5e10, math.Copysign(0, -1), "x", map[string]any{}}}, TypeAny),
		"tmpl":  irText("line\nbreak \"q\" é \\ ", "input.amount"),
		"list":  {List: []*Value{irLit(1, TypeNumber), {Object: map[string]*Value{"k é": irTmpl("input.amount", TypeNumber)}, Type: ObjectOf(map[string]*Type{"k é": TypeNumber})}}, Type: ListOf(TypeAny)},
		"typed": {Lit: json.RawMessage(`{"l":[]}`), Type: nested},
	}), "nap")
	texts.DependsOn = []string{"nap"}
	texts.When = irExpr("steps.nap.output == null && 'é' != \"\\u00e9\"", TypeBool)
	texts.OutputType = ObjectOf(map[string]*Type{"list": ListOf(TypeAny), "obj": TypeAny, "quote": TypeString, "tmpl": TypeString, "typed": nested})
	texts.Foreach = &Foreach{Items: irExpr("[1, 2]", ListOf(TypeInt)), Concurrency: 1, OnFailure: "continue"}
	texts.Retry = &Retry{Attempts: 2, BackoffMS: 0, Multiplier: 1e-3}
	texts.Until = &Until{Cond: irExpr("true", TypeBool), MaxIterations: 1}
	texts.IdempotencyKey = irLit("k", TypeString)
	g.Steps = append(g.Steps, nap, texts)
	g.Alerts = append(g.Alerts, Alert{Name: "page", On: []string{"dead_lettered", "timed_out"}, Action: Action{Kind: KindExec, Exec: &ExecAction{Command: irLit([]string{"page", "ü"}, ListOf(TypeString))}}})
	Seal(g)
	if err := ValidateGraph(g); err != nil {
		t.Fatalf("irEvery is not valid: %v", err)
	}
	return g
}

// storedCorpus returns the graphs of every example, every valid test
// workflow, every workflow of the conformance cases, and the hand-built
// graphs, by name.
func storedCorpus(t testing.TB) map[string]*Graph {
	t.Helper()
	out := map[string]*Graph{"irShip": irShip(t), "irFull": irFull(t), "irEvery": irEvery(t)}
	add := func(name string, src []byte) {
		m, diags := LoadFile(name, src)
		if diags.HasErrors() {
			return
		}
		for _, w := range m.Workflows {
			if w.Graph != nil {
				out[name+"/"+w.Name] = w.Graph
			}
		}
	}
	for _, pattern := range []string{"../examples/*.hcl", "testdata/valid/*.hcl"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			add(f, src)
		}
	}
	cases, _ := filepath.Glob("../spec/testdata/*.txtar")
	for _, c := range cases {
		a, err := txtar.ParseFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".hcl") {
				add(c+"/"+f.Name, f.Data)
			}
		}
	}
	add("chain", compileSource(30))
	return out
}

// TestDecodeFastMatchesReference: every stored graph of the corpus is
// taken by the fast decoder, which gives what encoding/json gives and
// encodes back to the stored bytes.
func TestDecodeFastMatchesReference(t *testing.T) {
	corpus := storedCorpus(t)
	if len(corpus) < 50 {
		t.Fatalf("only %d graphs in the corpus: examples or conformance cases not found", len(corpus))
	}
	for name, g := range corpus {
		t.Run(name, func(t *testing.T) { checkStored(t, g) })
	}
}

// TestDecodeFastShares: the fast decoder shares equal types and mode
// strings as the reference Decode does.
func TestDecodeFastShares(t *testing.T) {
	b, err := Encode(irEvery(t))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := decodeFast(b, newTypeInterner())
	if !ok {
		t.Fatal("not taken")
	}
	seen := map[string]*Type{}
	var walk func(*Type)
	walk = func(ty *Type) {
		if ty == nil {
			return
		}
		k := ty.String()
		if s, ok := seen[k]; ok && s != ty {
			t.Errorf("type %s is not shared", k)
		}
		seen[k] = ty
		walk(ty.Elem)
		for _, f := range ty.Fields {
			walk(f)
		}
	}
	for _, s := range g.Steps {
		walk(s.OutputType)
		if s.When != nil {
			walk(s.When.Type)
		}
	}
	if seen["bool"] != TypeBool || seen["string"] != TypeString {
		t.Error("scalar types are not the package's")
	}
}

// TestDecodeFastMalformed feeds the fast decoder and Decode damaged and
// unusual records: cut short at every byte, members unknown, repeated,
// misspelt or of the wrong type, escapes, numbers out of range, white
// space. The fast decoder either takes a record and agrees with
// encoding/json, or leaves it to the reference decode, and Decode's error
// is the reference's, word for word.
func TestDecodeFastMalformed(t *testing.T) {
	small, err := Encode(irFull(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(small) {
		if checkFast(t, small[:i]) {
			t.Fatalf("the fast decoder took the record cut at %d", i)
		}
	}
	good := string(small)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(small, &m); err != nil {
		t.Fatal(err)
	}
	rep := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("%q is not in the record", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	// Records the fast decoder must take (and agree on).
	cut := strings.Index(good, `,"steps":`)
	noSteps := good[:cut] + good[cut+len(`,"steps":`)+len(m["steps"]):]
	taken := map[string]string{
		"null steps":        noSteps[:len(noSteps)-1] + `,"steps":null}`,
		"as stored":         good,
		"white space":       " \n\t" + spaced(good) + " \r\n",
		"members reordered": rep(`"workflow":"ship-order","version":"1.4.0"`, `"version":"1.4.0","workflow":"ship-order"`),
		"escaped text":      rep(`"text":"rejected by "`, `"text":"re\u006aected\/by\t\"\\\b\f\n\r \u00e9\u20ac\ud83d\ude00 "`),
		"lone surrogate":    rep(`"text":"rejected by "`, `"text":"a\ud800b\udc00c\ud800\u0041\ud83d"`),
		"invalid utf-8":     rep(`"text":"rejected by "`, "\"text\":\"a\xffb\xc3(\xed\xa0\x80\xf0\x9f\x98\""),
		"utf-8 text":        rep(`"text":"rejected by "`, `"text":"é😀 `+"\u2028"+`"`),
		"escaped map key":   rep(`"X-Order"`, `"X-\u004frder\u00e9"`),
		"lit with spaces":   rep(`"lit":{"a":[null,true],"b":1.5}`, `"lit": { "b" : 1.5 , "a" : [ null , true ] } `),
		"lit not canonical": rep(`"lit":"http://127.0.0.1:8080/charge"`, `"lit":"http:\/\/127.0.0.1:8080\/charge\u003c"`),
		"lit null":          rep(`"lit":"/tmp"`, `"lit":null`),
		"default null":      rep(`"default":false`, `"default":null`),
		"null members":      strings.NewReplacer(`"description":"Charge, reserve, ship."`, `"description":null`, `"key":{"cel":"input.order_id","type":{"kind":"string"}},`, `"key":null,`, `"secrets":[{"name":"alert_token","env":"ALERT_TOKEN"}]`, `"secrets":null`).Replace(good),
		"null int":          rep(`"deadline_ms":7200000`, `"deadline_ms":null`),
		"null element":      rep(`"on":["failed","interrupted"]`, `"on":["failed",null,"interrupted"]`),
		"null type":         rep(`"output_type":{"kind":"string"}`, `"output_type":null`),
		"no steps":          noSteps,
		"empty collections": rep(`"expect":[200,201]`, `"expect":[]`),
		"empty object":      rep(`"lit":"/tmp","type":{"kind":"string"}`, `"object":{},"lit":1,"type":{"kind":"object","fields":{}}`),
		"unsorted needs":    rep(`"needs":["reject","restock","run_script"]`, `"needs":["run_script","reject","restock","reject"]`),
		"negative zero":     rep(`"timeout_ms":1500`, `"timeout_ms":-0`),
		"max int":           rep(`"timeout_ms":1500`, `"timeout_ms":9223372036854775807`),
		"min int":           rep(`"deadline_ms":7200000`, `"deadline_ms":-9223372036854775808`),
		"float forms":       rep(`"multiplier":1.5`, `"multiplier":15E-1`),
		"invalid graph":     rep(`"join":"any"`, `"join":"some"`),
		"null step":         rep(`"steps":[`, `"steps":[null,`),
		"type repeated":     rep(`"output_type":{"kind":"string"}`, `"output_type":{ "kind" : "string" }`),
	}
	// Records that must go the slow way, valid or not.
	slow := map[string]string{
		"unknown member":       rep(`"workflow":`, `"colour":1,"workflow":`),
		"unknown step field":   rep(`"name":"poll"`, `"name":"poll","colour":1`),
		"unknown type field":   rep(`{"kind":"number"}`, `{"kind":"number","x":1}`),
		"case-insensitive":     rep(`"name":"poll"`, `"NAME":"poll"`),
		"escaped member name":  rep(`"name":"poll"`, `"n\u0061me":"poll"`),
		"kelvin member name":   rep(`"kind":"number"`, `"`+"\u212a"+`ind":"number"`),
		"duplicate member":     rep(`"workflow":"ship-order"`, `"workflow":"a","workflow":"ship-order"`),
		"duplicate step field": rep(`"join":"any"`, `"join":"all","join":"any"`),
		"duplicate when":       rep(`"when":{"cel":"input.express"`, `"when":{"cel":"x","type":{"kind":"int"}},"when":{"cel":"input.express"`),
		"duplicate map key":    rep(`"X-Order":`, `"X-Order":{"lit":1,"type":null},"X-Order":`),
		"duplicate field type": rep(`"exit_code":{"kind":"int"}`, `"exit_code":{"kind":"string"},"exit_code":{"kind":"int"}`),
		"string for int":       rep(`"deadline_ms":7200000`, `"deadline_ms":"7200000"`),
		"fraction for int":     rep(`"deadline_ms":7200000`, `"deadline_ms":7200000.0`),
		"exponent for int":     rep(`"deadline_ms":7200000`, `"deadline_ms":72e5`),
		"int overflow":         rep(`"deadline_ms":7200000`, `"deadline_ms":9223372036854775808`),
		"int underflow":        rep(`"deadline_ms":7200000`, `"deadline_ms":-9223372036854775809`),
		"huge float":           rep(`"multiplier":1.5`, `"multiplier":1e400`),
		"leading zero":         rep(`"deadline_ms":7200000`, `"deadline_ms":07200000`),
		"plus sign":            rep(`"deadline_ms":7200000`, `"deadline_ms":+7200000`),
		"bool for string":      rep(`"join":"any"`, `"join":true`),
		"number for bool":      rep(`"shell":true`, `"shell":1`),
		"object for list":      rep(`"needs":["route"]`, `"needs":{"a":"route"}`),
		"list for object":      rep(`"limits":{`, `"limits":[],"x":{`),
		"string for type":      rep(`"type":{"kind":"bool"}`, `"type":"bool"`),
		"top level list":       "[" + good + "]",
		"top level null":       "null",
		"empty":                "",
		"trailing data":        good + "{}",
		"trailing garbage":     good + "x",
		"two graphs":           good + good,
		"bad escape":           rep(`"text":"rejected by "`, `"text":"\x"`),
		"short unicode escape": rep(`"text":"rejected by "`, `"text":"\u12"`),
		"control character":    rep(`"text":"rejected by "`, "\"text\":\"a\nb\""),
		"bad literal":          rep(`"lit":"/tmp"`, `"lit":[1,]`),
		"bad literal number":   rep(`"lit":"/tmp"`, `"lit":1.`),
		"bad literal word":     rep(`"lit":"/tmp"`, `"lit":nul`),
		"trailing comma":       rep(`"on":["failed","interrupted"]`, `"on":["failed","interrupted",]`),
		"missing comma":        rep(`"on":["failed","interrupted"]`, `"on":["failed" "interrupted"]`),
		"deep literal":         rep(`"lit":"/tmp"`, `"lit":`+strings.Repeat("[", 600)+strings.Repeat("]", 600)),
	}
	for name, src := range taken {
		t.Run("taken/"+name, func(t *testing.T) {
			if !checkFast(t, []byte(src)) {
				t.Fatalf("the fast decoder does not take %.2000s", src)
			}
		})
	}
	for name, src := range slow {
		t.Run("slow/"+name, func(t *testing.T) {
			if checkFast(t, []byte(src)) {
				t.Fatalf("the fast decoder takes %.2000s", src)
			}
		})
	}
	// Every string member in turn given a character needing an escape,
	// every number a neighbour: taken or not, always agreeing.
	for i := 0; i < len(good); i++ {
		if good[i] == ':' && i+1 < len(good) && good[i+1] == '"' {
			checkFast(t, []byte(good[:i+2]+`\u00e9\"`+good[i+2:]))
		}
		if good[i] == ':' && i+1 < len(good) && good[i+1] >= '0' && good[i+1] <= '9' {
			checkFast(t, []byte(good[:i+1]+"-"+good[i+1:]))
			checkFast(t, []byte(good[:i+1]+"1e1"+good[i+2:]))
		}
	}
}

// spaced puts white space around every colon and comma of a JSON text
// outside its strings.
func spaced(s string) string {
	var b strings.Builder
	in, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ':' || c == ',' || c == '[' || c == '{'):
			b.WriteString(" \t")
			b.WriteByte(c)
			b.WriteString("\n ")
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FuzzDecode: the fast decoder never panics, and whatever it takes,
// encoding/json takes and decodes to the same graph; Decode agrees with
// the reference decode, error text included.
func FuzzDecode(f *testing.F) {
	for _, g := range storedCorpus(f) {
		b, err := Encode(g)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 20000 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFast(t, b)
	})
}

// storedBytes returns the stored encoding of the n-step chain of
// storedGraph.
func storedBytes(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := Encode(storedGraph(tb, n))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkDecode10000Steps decodes the stored graph of a 10,000-step chain
// (3.1 MB), as resuming a run in a new process does.
func BenchmarkDecode10000Steps(b *testing.B) {
	src := storedBytes(b, 10000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeReference10000Steps is BenchmarkDecode10000Steps through
// encoding/json (decodeReference): the path before the fast decoder.
func BenchmarkDecodeReference10000Steps(b *testing.B) {
	src := storedBytes(b, 10000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := decodeReference(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONValid10000Steps runs json.Valid over the bytes of
// BenchmarkDecode10000Steps: a fixed reference for the decode figures on a
// shared, noisy machine.
func BenchmarkJSONValid10000Steps(b *testing.B) {
	src := storedBytes(b, 10000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !json.Valid(src) {
			b.Fatal("invalid")
		}
	}
}
