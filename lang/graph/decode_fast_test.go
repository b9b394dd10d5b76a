package graph_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/rogpeppe/go-internal/txtar"
)

// jsonWhole is the reference decodeFast must agree with: encoding/json
// decoding the whole record strictly (one value, nothing after it), then
// the normal form; no validation, which Decode applies to both.
func jsonWhole(b []byte) (*graph.Graph, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var g graph.Graph
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	graph.EncNormalize(&g, true)
	return &g, nil
}

// checkFast decodes b with decodeFast and the reference decoders. When the
// fast decoder takes b, the reference must too and give a deep-equal graph;
// Decode must give what decodeReference (the encoding/json path) gives:
// an equal graph or the same error text. It reports whether the fast
// decoder took b.
func checkFast(t testing.TB, b []byte) bool {
	t.Helper()
	g, ok := graph.DecodeFast(b, graph.NewTypeInterner())
	// The parallel decode of the steps, forced on the smallest list: it
	// takes what one pass takes and gives the same graph.
	pg, pok := graph.DecodeFastSplit(b, graph.NewTypeInterner(), forcedSplit)
	if pok != ok {
		t.Fatalf("the parallel decode takes %.2000q: %v, one pass: %v", b, pok, ok)
	}
	if ok && !reflect.DeepEqual(g, pg) {
		got, _ := json.Marshal(pg)
		want, _ := json.Marshal(g)
		t.Fatalf("the parallel decode gives\n%s\none pass\n%s\nfor %q", got, want, b)
	}
	if ok {
		checkShared(t, pg)
	}
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
	dg, derr := graph.Decode(b)
	rg, rerr := graph.DecodeReference(b)
	pdg, pderr := graph.DecodeSplit(b, forcedSplit)
	switch {
	case (pderr == nil) != (rerr == nil):
		t.Fatalf("parallel Decode error %v, reference error %v, for %.2000q", pderr, rerr, b)
	case pderr != nil && pderr.Error() != rerr.Error():
		t.Fatalf("parallel Decode error\n%v\nreference error\n%v\nfor %.2000q", pderr, rerr, b)
	case pderr == nil && !reflect.DeepEqual(pdg, rg):
		t.Fatalf("parallel Decode and the reference decode differ for %.2000q", b)
	}
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

// forcedSplit decodes the steps of any graph in parallel, in chunks of
// one or a few steps, on more goroutines than the machine has processors.
var forcedSplit = graph.FastSplit{Workers: 4, MinBytes: 0, ChunkBytes: 1}

// checkShared checks that the equal types of a decoded graph are one tree,
// whichever chunk of the steps they came from, and the scalars the
// package's.
func checkShared(t testing.TB, g *graph.Graph) {
	t.Helper()
	seen := map[string]*graph.Type{}
	for _, ty := range []*graph.Type{graph.TypeString, graph.TypeNumber, graph.TypeInt, graph.TypeBool, graph.TypeAny, graph.TypeNull} {
		seen[testTypeKey(ty)] = ty
	}
	var walk func(*graph.Type)
	walk = func(ty *graph.Type) {
		if ty == nil {
			return
		}
		k := testTypeKey(ty)
		if s, ok := seen[k]; ok && s != ty {
			t.Fatalf("type %s is not shared", k)
		}
		seen[k] = ty
		walk(ty.Elem)
		for _, f := range ty.Fields {
			walk(f)
		}
	}
	for _, s := range g.Steps {
		if s == nil {
			continue
		}
		walk(s.OutputType)
		if s.When != nil {
			walk(s.When.Type)
		}
		if s.Action.Set != nil {
			for _, v := range s.Action.Set.Values {
				if v.Value != nil {
					walk(v.Value.Type)
				}
			}
		}
	}
}

// testTypeKey spells out the structure of a type: equal keys, equal types.
func testTypeKey(t *graph.Type) string {
	if t == nil {
		return "nil"
	}
	k := strconv.Quote(string(t.Kind)) + "(" + testTypeKey(t.Elem) + ")"
	if t.Fields != nil {
		names := slices.Sorted(maps.Keys(t.Fields))
		k += "{"
		for _, n := range names {
			k += strconv.Quote(n) + ":" + testTypeKey(t.Fields[n]) + ","
		}
		k += "}"
	}
	return k
}

// checkStored checks that the fast decoder takes a stored graph, gives what
// the reference whole decode gives, and that the result encodes to the
// same bytes.
func checkStored(t *testing.T, g *graph.Graph) {
	t.Helper()
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	if !checkFast(t, b) {
		t.Fatalf("the fast decoder does not take the stored graph %s", b)
	}
	fast, _ := graph.DecodeFast(b, graph.NewTypeInterner())
	ref, err := decodeWhole(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, ref) {
		t.Fatal("the fast decoder and decodeWhole differ")
	}
	if again, err := graph.Encode(fast); err != nil || !bytes.Equal(again, b) {
		t.Fatalf("the fast decode encodes to\n%s\nnot\n%s (%v)", again, b, err)
	}
	dg, err := graph.Decode(b)
	if err != nil || !reflect.DeepEqual(dg, ref) {
		t.Fatalf("Decode: %v", err)
	}
}

// irEvery extends irFull with what it leaves out: a breaker's on_open, a
// sleep duration, literals and templates with escapes and non-ASCII text,
// nested lists, objects and types, an object default, several alerts, a
// retention.
func irEvery(t testing.TB) *graph.Graph {
	t.Helper()
	g := graph.IrFull(t)
	g.Breakers[0].OnOpen = "fail"
	g.RetentionMS = 30 * 24 * 3600 * 1000
	g.Breakers = append(g.Breakers, graph.Breaker{Name: "slow", Failures: 1, CooldownMS: 1})
	g.Inputs = append(g.Inputs, graph.Input{Name: "opts", Type: graph.ObjectOf(map[string]*graph.Type{"a": graph.ListOf(graph.TypeInt), "b": graph.TypeString}),
		Default: json.RawMessage(`{"b":"x\u00e9\"\\","a":[1,-2,3.5e-7]}`)})
	nap := graph.IrStep("nap", graph.Action{Kind: graph.KindSleep, Sleep: &graph.SleepAction{DurationMS: 5000}})
	nap.Breaker = "slow"
	nested := graph.ObjectOf(map[string]*graph.Type{"l": graph.ListOf(graph.MapOf(graph.ObjectOf(map[string]*graph.Type{"é": graph.TypeInt, "k\"q": graph.TypeNull}))), "o": graph.ObjectOf(map[string]*graph.Type{})})
	texts := graph.IrStep("étape 😀", graph.IrSet(map[string]*graph.Value{
		"quote": graph.IrLit("a\"b\\c\n\t\u00e9 😀 <&> \u2028 \x7f /", graph.TypeString),
		"obj":   graph.IrLit(map[string]any{"z": 1, "a": []any{1.5e10, math.Copysign(0, -1), "x", map[string]any{}}}, graph.TypeAny),
		"tmpl":  graph.IrText("line\nbreak \"q\" é \\ ", "input.amount"),
		"list":  {List: []*graph.Value{graph.IrLit(1, graph.TypeNumber), {Object: map[string]*graph.Value{"k é": graph.IrTmpl("input.amount", graph.TypeNumber)}, Type: graph.ObjectOf(map[string]*graph.Type{"k é": graph.TypeNumber})}}, Type: graph.ListOf(graph.TypeAny)},
		"typed": {Lit: json.RawMessage(`{"l":[]}`), Type: nested},
	}), "nap")
	texts.DependsOn = []string{"nap"}
	texts.When = graph.IrExpr("steps.nap.output == null && 'é' != \"\\u00e9\"", graph.TypeBool)
	texts.OutputType = graph.ObjectOf(map[string]*graph.Type{"list": graph.ListOf(graph.TypeAny), "obj": graph.TypeAny, "quote": graph.TypeString, "tmpl": graph.TypeString, "typed": nested})
	texts.Foreach = &graph.Foreach{Items: graph.IrExpr("[1, 2]", graph.ListOf(graph.TypeInt)), Concurrency: 1, OnFailure: "continue"}
	texts.Retry = &graph.Retry{Attempts: 2, BackoffMS: 0, Multiplier: 1e-3}
	texts.Until = &graph.Until{Cond: graph.IrExpr("true", graph.TypeBool), MaxIterations: 1}
	texts.IdempotencyKey = graph.IrLit("k", graph.TypeString)
	raise := graph.IrStep("raise", graph.Action{Kind: graph.KindFail, Fail: &graph.FailAction{
		Error: graph.IrTmpl("steps.nap.error", graph.TypeAny), Type: graph.IrLit("urn:x:late", graph.TypeString),
		Status: graph.IrLit(409, graph.TypeInt), Title: graph.IrLit("Late", graph.TypeString),
		Detail: graph.IrText("slept ", "input.amount"), Instance: graph.IrLit("/orders/1", graph.TypeString)}}, "nap")
	pet := graph.IrStep("pet", graph.Action{Kind: graph.KindHTTP, HTTP: &graph.HTTPAction{Method: "GET",
		URL:     graph.IrText("http://petstore.test/pets/", "input.amount"),
		OpenAPI: &graph.OpenAPIRef{Document: "api/petstore.yaml", SHA256: strings.Repeat("0a", 32), Operation: "showPetById"}}})
	login := graph.IrStep("login", graph.Action{Kind: graph.KindHTTP, HTTP: &graph.HTTPAction{Method: "POST",
		URL:  graph.IrLit("http://api.test/login", graph.TypeString),
		Auth: &graph.HTTPAuth{Username: graph.IrLit("bot", graph.TypeString), Password: graph.IrText("", "input.amount")}}})
	bearer := graph.IrStep("bearer", graph.Action{Kind: graph.KindHTTP, HTTP: &graph.HTTPAction{Method: "GET",
		URL:  graph.IrLit("http://api.test/me", graph.TypeString),
		Auth: &graph.HTTPAuth{Bearer: graph.IrText("tok-", "input.amount")}}})
	undo := graph.IrStep("undo", graph.Action{Kind: graph.KindExec, Exec: &graph.ExecAction{Command: graph.IrLit([]string{"do"}, graph.ListOf(graph.TypeString))}})
	undo.Compensate = &graph.Compensate{OnCancel: true, TimeoutMS: 1000, Retry: &graph.Retry{Attempts: 2, BackoffMS: 10, Multiplier: 1, When: graph.IrExpr("error.kind == 'exec'", graph.TypeBool)},
		Action: graph.Action{Kind: graph.KindExec, Exec: &graph.ExecAction{Command: graph.IrLit([]string{"undo"}, graph.ListOf(graph.TypeString))}}}
	emit := graph.IrStep("emit", graph.Action{Kind: graph.KindHTTP, HTTP: &graph.HTTPAction{Method: "POST",
		URL: graph.IrLit("http://sink.test/", graph.TypeString),
		Emit: &graph.EmitSpec{Type: graph.IrLit("com.example.x", graph.TypeString), Source: graph.IrLit("flowrun/ship-order", graph.TypeString),
			Subject: graph.IrText("order ", "input.amount"), Data: graph.IrTmpl("input.amount", graph.TypeNumber), Binary: true}}})
	g.Steps = append(g.Steps, nap, texts, raise, pet, undo, login, bearer, emit)
	g.Alerts = append(g.Alerts, graph.Alert{Name: "page", On: []string{"dead_lettered", "timed_out"}, Action: graph.Action{Kind: graph.KindExec, Exec: &graph.ExecAction{Command: graph.IrLit([]string{"page", "ü"}, graph.ListOf(graph.TypeString))}}})
	graph.Seal(g)
	if err := graph.ValidateGraph(g); err != nil {
		t.Fatalf("irEvery is not valid: %v", err)
	}
	return g
}

// irWaitTyped is irFull with a type on its wait step's data (language.md
// §8.6), the one field irEvery leaves out.
func irWaitTyped(t testing.TB) *graph.Graph {
	t.Helper()
	g := graph.IrFull(t)
	typed := false
	for i := range g.Steps {
		if w := g.Steps[i].Action.Wait; w != nil {
			w.Type = graph.ObjectOf(map[string]*graph.Type{"approved": graph.TypeBool, "by": graph.TypeString})
			g.Steps[i].OutputType = w.Type
			typed = true
		}
	}
	if !typed {
		t.Fatal("irFull has no wait step")
	}
	graph.Seal(g)
	if err := graph.ValidateGraph(g); err != nil {
		t.Fatalf("irWaitTyped is not valid: %v", err)
	}
	return g
}

// storedCorpus returns the graphs of every example, every valid test
// workflow, every workflow of the conformance cases, and the hand-built
// graphs, by name.
func storedCorpus(t testing.TB) map[string]*graph.Graph {
	t.Helper()
	out := map[string]*graph.Graph{"irShip": graph.IrShip(t), "irFull": graph.IrFull(t), "irEvery": irEvery(t), "irWaitTyped": irWaitTyped(t)}
	add := func(name string, src []byte) {
		m, diags := lang.LoadFile(name, src)
		if diags.HasErrors() {
			return
		}
		for _, w := range m.Workflows {
			if w.Graph != nil {
				out[name+"/"+w.Name] = w.Graph
			}
		}
	}
	for _, pattern := range []string{"../../examples/*.hcl", "../testdata/valid/*.hcl"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			add(f, src)
		}
	}
	cases, _ := filepath.Glob("../../spec/testdata/*.txtar")
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
	add("chain", testsrc.Chain(30))
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
	b, err := graph.Encode(irEvery(t))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := graph.DecodeFast(b, graph.NewTypeInterner())
	if !ok {
		t.Fatal("not taken")
	}
	seen := map[string]*graph.Type{}
	var walk func(*graph.Type)
	walk = func(ty *graph.Type) {
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
	if seen["bool"] != graph.TypeBool || seen["string"] != graph.TypeString {
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
	small, err := graph.Encode(graph.IrFull(t))
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
		"null steps":         noSteps[:len(noSteps)-1] + `,"steps":null}`,
		"as stored":          good,
		"white space":        " \n\t" + spaced(good) + " \r\n",
		"members reordered":  rep(`"workflow":"ship-order","version":"1.4.0"`, `"version":"1.4.0","workflow":"ship-order"`),
		"escaped text":       rep(`"text":"rejected by "`, `"text":"re\u006aected\/by\t\"\\\b\f\n\r \u00e9\u20ac\ud83d\ude00 "`),
		"lone surrogate":     rep(`"text":"rejected by "`, `"text":"a\ud800b\udc00c\ud800\u0041\ud83d"`),
		"invalid utf-8":      rep(`"text":"rejected by "`, "\"text\":\"a\xffb\xc3(\xed\xa0\x80\xf0\x9f\x98\""),
		"utf-8 text":         rep(`"text":"rejected by "`, `"text":"é😀 `+"\u2028"+`"`),
		"escaped map key":    rep(`"X-Order"`, `"X-\u004frder\u00e9"`),
		"lit with spaces":    rep(`"lit":{"a":[null,true],"b":1.5}`, `"lit": { "b" : 1.5 , "a" : [ null , true ] } `),
		"lit not canonical":  rep(`"lit":"http://127.0.0.1:8080/charge"`, `"lit":"http:\/\/127.0.0.1:8080\/charge\u003c"`),
		"lit null":           rep(`"lit":"/tmp"`, `"lit":null`),
		"default null":       rep(`"default":false`, `"default":null`),
		"null members":       strings.NewReplacer(`"description":"Charge, reserve, ship."`, `"description":null`, `"key":{"cel":"input.order_id","type":{"kind":"string"}},`, `"key":null,`, `"secrets":[{"name":"alert_token","env":"ALERT_TOKEN"}]`, `"secrets":null`).Replace(good),
		"null int":           rep(`"deadline_ms":7200000`, `"deadline_ms":null`),
		"null element":       rep(`"on":["failed","interrupted"]`, `"on":["failed",null,"interrupted"]`),
		"null type":          rep(`"output_type":{"kind":"string"}`, `"output_type":null`),
		"no steps":           noSteps,
		"empty collections":  rep(`"expect":[200,201]`, `"expect":[]`),
		"empty object":       rep(`"lit":"/tmp","type":{"kind":"string"}`, `"object":{},"lit":1,"type":{"kind":"object","fields":{}}`),
		"unsorted needs":     rep(`"needs":["reject","restock","run_script"]`, `"needs":["run_script","reject","restock","reject"]`),
		"negative zero":      rep(`"timeout_ms":1500`, `"timeout_ms":-0`),
		"max int":            rep(`"timeout_ms":1500`, `"timeout_ms":9223372036854775807`),
		"min int":            rep(`"deadline_ms":7200000`, `"deadline_ms":-9223372036854775808`),
		"float forms":        rep(`"multiplier":1.5`, `"multiplier":15E-1`),
		"invalid graph":      rep(`"join":"any"`, `"join":"some"`),
		"null step":          rep(`"steps":[`, `"steps":[null,`),
		"parts null":         rep(`"parts":[{"text":"rejected by "},{"expr":{"cel":"steps.approve.output.by","type":{"kind":"any"}}}]`, `"parts":null`),
		"values null":        rep(`"values":{"total":{"template":{"parts":[{"expr":{"cel":"input.amount * 1.2","type":{"kind":"number"}}}]},"type":{"kind":"number"}}}`, `"values":null`),
		"list empty":         rep(`"lit":"/tmp"`, `"list":[]`),
		"cases null":         rep(`"cases":[{"when":{"cel":"input.express","type":{"kind":"bool"}},"next":["ship_express"]}]`, `"cases":null`),
		"next null":          rep(`"next":["ship_express"]`, `"next":null`),
		"next unsorted":      rep(`"next":["ship_express"]`, `"next":["ship_standard","ship_express","ship_express"]`),
		"on null":            rep(`"on":["failed","interrupted"]`, `"on":null`),
		"on empty":           rep(`"on":["failed","interrupted"]`, `"on":[]`),
		"default empty":      rep(`"default":["ship_standard"]`, `"default":[]`),
		"needs empty":        rep(`"name":"poll",`, `"name":"poll","needs":[],"depends_on":[],`),
		"depends_on apart":   rep(`"needs":["cool_down"],"depends_on":["cool_down"]`, `"needs":["cool_down"],"depends_on":["cool_down","cool_down"]`),
		"steps out of order": rep(`{"name":"cool_down"`, `{"name":"zz","hash":"","join":"all","action":{"kind":""},"on_error":"fail","output_type":null},{"name":"cool_down"`),
		"fields empty":       rep(`"output_type":{"kind":"null"}`, `"output_type":{"kind":"object","fields":{}}`),
		"inputs unsorted":    rep(`"inputs":[{"name":"amount"`, `"inputs":[{"name":"zeta","type":{"kind":"number"}},{"name":"amount"`),
		"inputs empty":       strings.Replace(good, `"inputs":[{"name":"amount","type":{"kind":"number"}},{"name":"express","type":{"kind":"bool"},"default":false},{"name":"order_id","type":{"kind":"string"}}]`, `"inputs":[]`, 1),
		"type repeated":      rep(`"output_type":{"kind":"string"}`, `"output_type":{ "kind" : "string" }`),
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
		b, err := graph.Encode(g)
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
	b, err := graph.Encode(storedGraph(tb, n))
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
		if _, err := graph.Decode(src); err != nil {
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
		if _, err := graph.DecodeReference(src); err != nil {
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

// TestValidateGraphBreaks breaks a graph using every field in each way
// ValidateGraph checks, one at a time and all at once (in the order of the
// breaks' names), and compares every problem reported with the golden file
// testdata/validate_breaks.txt (go test ./lang/graph -run
// TestValidateGraphBreaks -update-validate rewrites it; review the diff).
// The unbroken graph is valid, and each break is reported.
func TestValidateGraphBreaks(t *testing.T) {
	find := func(g *graph.Graph, name string) *graph.Step {
		for _, s := range g.Steps {
			if s != nil && s.Name == name {
				return s
			}
		}
		panic("no step " + name)
	}
	breaks := map[string]func(g *graph.Graph){
		"workflow name":    func(g *graph.Graph) { g.Workflow = "" },
		"version":          func(g *graph.Graph) { g.Version = "1.x" },
		"input repeated":   func(g *graph.Graph) { g.Inputs = append(g.Inputs, g.Inputs[0]) },
		"input unnamed":    func(g *graph.Graph) { g.Inputs[1].Name = "" },
		"input default":    func(g *graph.Graph) { g.Inputs[1].Default = json.RawMessage("{") },
		"input type":       func(g *graph.Graph) { g.Inputs[0].Type = &graph.Type{Kind: "float"} },
		"secret repeated":  func(g *graph.Graph) { g.Secrets = append(g.Secrets, g.Secrets[0]) },
		"secret env":       func(g *graph.Graph) { g.Secrets[0].Env = "" },
		"key":              func(g *graph.Graph) { g.Key.CEL = " " },
		"concurrency key":  func(g *graph.Graph) { g.Concurrency.Key = nil },
		"concurrency":      func(g *graph.Graph) { g.Concurrency.Limit = 0; g.Concurrency.OnConflict = "drop" },
		"concurrency type": func(g *graph.Graph) { g.Concurrency.Key.Type = graph.ListOf(nil) },
		"breaker":          func(g *graph.Graph) { g.Breakers[0].Failures = 0; g.Breakers[0].OnOpen = "wait" },
		"breaker repeated": func(g *graph.Graph) { g.Breakers = append(g.Breakers, g.Breakers[1]) },
		"null step":        func(g *graph.Graph) { g.Steps = append([]*graph.Step{nil}, g.Steps...) },
		"step repeated":    func(g *graph.Graph) { g.Steps = append(g.Steps, g.Steps[0], g.Steps[3]) },
		"step unnamed":     func(g *graph.Graph) { g.Steps[0].Name = "" },
		"need unknown":     func(g *graph.Graph) { s := find(g, "done"); s.Needs = append(s.Needs, "nope") },
		"need itself":      func(g *graph.Graph) { s := find(g, "done"); s.Needs = append(s.Needs, "done") },
		"need later":       func(g *graph.Graph) { s := g.Steps[0]; s.Needs = append(s.Needs, g.Steps[5].Name) },
		"depends on":       func(g *graph.Graph) { s := find(g, "done"); s.DependsOn = []string{"route", "reject", "x"} },
		"depends on many": func(g *graph.Graph) {
			s := find(g, "done")
			for _, o := range g.Steps[:len(g.Steps)-3] {
				s.Needs = append(s.Needs, o.Name)
			}
			s.DependsOn = []string{"route", "reject", "x"}
		},
		"modes": func(g *graph.Graph) { s := find(g, "done"); s.Join = "some"; s.OnError = "retry" },
		"when":  func(g *graph.Graph) { find(g, "reject").When.CEL = "" },
		"kind":  func(g *graph.Graph) { find(g, "done").Action.Kind = "run" },
		"two blocks": func(g *graph.Graph) {
			a := &find(g, "price").Action
			a.Exec = find(g, "poll").Action.Exec
			a.Wait = &graph.WaitAction{}
		},
		"missing block":    func(g *graph.Graph) { a := &find(g, "price").Action; a.Kind = graph.KindHTTP },
		"no kind, a block": func(g *graph.Graph) { find(g, "done").Action.Fail = &graph.FailAction{} },
		"exec":             func(g *graph.Graph) { find(g, "poll").Action.Exec.Command = nil },
		"exec values": func(g *graph.Graph) {
			e := find(g, "run_script").Action.Exec
			e.Dir.Template = &graph.Template{}
			e.Env.Object = nil
			e.Stdin.Type = graph.MapOf(nil)
		},
		"http": func(g *graph.Graph) {
			h := find(g, "charge").Action.HTTP
			h.Method = "post"
			h.URL = nil
			h.Headers.Lit = json.RawMessage("[")
		},
		"http no method": func(g *graph.Graph) { find(g, "charge").Action.HTTP.Method = "" },
		"set": func(g *graph.Graph) {
			v := &find(g, "étape 😀").Action.Set.Values
			v.Put("gone", nil)
			v.Get("quote").Lit = json.RawMessage(`"`)
		},
		"sleep":      func(g *graph.Graph) { find(g, "nap").Action.Sleep.DurationMS = -1 },
		"sleep both": func(g *graph.Graph) { find(g, "cool_down").Action.Sleep.DurationMS = 5 },
		"wait":       func(g *graph.Graph) { find(g, "approve").Action.Wait.Signal = "" },
		"workflow":   func(g *graph.Graph) { w := find(g, "restock").Action.Workflow; w.Name = ""; w.Version = "x" },
		"fail":       func(g *graph.Graph) { find(g, "reject").Action.Fail.Message = nil },
		"switch": func(g *graph.Graph) {
			sw := find(g, "route").Action.Switch
			sw.Cases[0].When = nil
			sw.Cases[0].Next = []string{"nope", "done"}
		},
		"switch case type": func(g *graph.Graph) {
			sw := find(g, "route").Action.Switch
			sw.Cases = append(sw.Cases, graph.SwitchCase{When: &graph.Expr{CEL: "x", Type: &graph.Type{Kind: "x"}}})
		},
		"alert switch":       func(g *graph.Graph) { g.Alerts[0].Action = find(g, "route").Action },
		"alert on":           func(g *graph.Graph) { g.Alerts[0].On = []string{"failed", "done"} },
		"alert repeated":     func(g *graph.Graph) { g.Alerts = append(g.Alerts, g.Alerts[0]) },
		"alert unnamed":      func(g *graph.Graph) { g.Alerts[1].Name = "" },
		"timeout":            func(g *graph.Graph) { find(g, "run_script").TimeoutMS = -5 },
		"retry":              func(g *graph.Graph) { r := find(g, "charge").Retry; r.Attempts = 0; r.When.CEL = "" },
		"breaker undeclared": func(g *graph.Graph) { find(g, "poll").Breaker = "nope" },
		"foreach": func(g *graph.Graph) {
			f := find(g, "label").Foreach
			f.Items = nil
			f.Concurrency = 0
			f.OnFailure = "x"
		},
		"until":           func(g *graph.Graph) { u := find(g, "poll").Until; u.Cond = nil; u.MaxIterations = 0 },
		"idempotency key": func(g *graph.Graph) { find(g, "restock").IdempotencyKey.Lit = json.RawMessage("1") },
		"value empty":     func(g *graph.Graph) { find(g, "restock").IdempotencyKey = &graph.Value{} },
		"output type": func(g *graph.Graph) {
			find(g, "poll").OutputType = graph.ObjectOf(map[string]*graph.Type{"a": {Kind: "x"}, "b": graph.ListOf(nil)})
		},
		"shared bad type": func(g *graph.Graph) {
			bad := graph.MapOf(&graph.Type{Kind: "q"})
			for _, s := range g.Steps {
				s.OutputType = bad
			}
		},
		"shared good type": func(g *graph.Graph) {
			good := graph.ObjectOf(map[string]*graph.Type{"a": graph.ListOf(graph.TypeInt)})
			for _, s := range g.Steps {
				s.OutputType = good
			}
			g.Steps[2].OutputType = graph.ObjectOf(map[string]*graph.Type{"a": graph.ListOf(good), "b": &graph.Type{Kind: "z"}})
		},
		"output": func(g *graph.Graph) {
			g.Outputs[0].Value = nil
			g.Outputs = append(g.Outputs, graph.Output{Type: &graph.Type{Kind: "list"}})
		},
		"output repeated": func(g *graph.Graph) { g.Outputs = append(g.Outputs, g.Outputs[1]) },
		"template":        func(g *graph.Graph) { g.Outputs[1].Value.Template.Parts[0].Expr.CEL = "" },
		"list element":    func(g *graph.Graph) { find(g, "run_script").Action.Exec.Stdin.List[0].Template = &graph.Template{} },
	}
	problems := func(g *graph.Graph) string {
		err := graph.ValidateGraph(g)
		if err == nil {
			t.Fatal("the graph is valid")
		}
		// Problems inside maps come in no fixed order: compare them sorted.
		prefix := fmt.Sprintf("graph %q is not valid: ", g.Workflow)
		lines := strings.Split(strings.TrimPrefix(err.Error(), prefix), "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n") + "\n"
	}
	if err := graph.ValidateGraph(irEvery(t)); err != nil {
		t.Fatalf("the unbroken graph: %v", err)
	}
	names := slices.Sorted(maps.Keys(breaks))
	var got strings.Builder
	all := irEvery(t)
	for _, name := range names {
		g := irEvery(t)
		breaks[name](g)
		fmt.Fprintf(&got, "== %s\n%s", name, problems(g))
		// All at once, as far as the earlier breaks leave each possible.
		func() {
			defer func() { _ = recover() }()
			breaks[name](all)
		}()
	}
	fmt.Fprintf(&got, "== all at once\n%s", problems(all))
	if err := graph.ValidateGraph(nil); err == nil {
		t.Fatal("a nil graph is valid")
	} else {
		fmt.Fprintf(&got, "== nil\n%s\n", err)
	}
	path := filepath.Join("testdata", "validate_breaks.txt")
	if *updateValidate {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./lang/graph -run TestValidateGraphBreaks -update-validate writes it)", err)
	}
	if got.String() != string(want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d of %s:\ngot  %s\nwant %s", i+1, path, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: got %d lines, want %d", path, len(gl), len(wl))
	}
}

var updateValidate = flag.Bool("update-validate", false, "rewrite lang/graph/testdata/validate_breaks.txt")

// TestDecodeParallel decodes a long chain with its steps split in chunks
// of every size, on up to more goroutines than chunks: the graph is the
// one pass's and the reference's, equal types are one tree across the
// chunks, and no goroutine outlives the call.
func TestDecodeParallel(t *testing.T) {
	b := storedBytes(t, 600)
	ref, err := decodeWhole(b)
	if err != nil {
		t.Fatal(err)
	}
	one, ok := graph.DecodeFastSplit(b, graph.NewTypeInterner(), graph.FastSplit{})
	if !ok {
		t.Fatal("one pass does not take the chain")
	}
	if cuts := graph.FastCuts(b, bytes.Index(b, []byte(`"steps":[`))+len(`"steps":[`), 16); len(cuts) != 15 {
		t.Fatalf("%d cuts in the chain, want 15", len(cuts))
	}
	before := runtime.NumGoroutine()
	for _, sp := range []graph.FastSplit{
		graph.DefaultFastSplit(),
		{Workers: 2, ChunkBytes: 1},
		{Workers: 2, ChunkBytes: len(b) / 2},
		{Workers: 3, ChunkBytes: 1000},
		{Workers: 8, ChunkBytes: 1},
		{Workers: 64, ChunkBytes: 1},
		{Workers: 2, ChunkBytes: len(b)}, // one chunk: not split
		{Workers: 4, MinBytes: len(b)},   // too small to split
	} {
		t.Run(fmt.Sprintf("%+v", sp), func(t *testing.T) {
			g, ok := graph.DecodeFastSplit(b, graph.NewTypeInterner(), sp)
			if !ok {
				t.Fatal("not taken")
			}
			if !reflect.DeepEqual(g, one) || !reflect.DeepEqual(g, ref) {
				t.Fatal("the parallel decode differs from one pass or from encoding/json")
			}
			checkShared(t, g)
			first, last := g.Steps[1], g.Steps[len(g.Steps)-1]
			if first.OutputType != last.OutputType || first.Action.Set.Values.Get("n").Type != graph.TypeNumber ||
				first.Action.Set.Values.Get("label").Type != last.Action.Set.Values.Get("label").Type {
				t.Fatal("the types of steps in different chunks are not shared")
			}
			dg, err := graph.DecodeSplit(b, sp)
			if err != nil || !reflect.DeepEqual(dg, ref) {
				t.Fatalf("Decode: %v", err)
			}
			if again, err := graph.Encode(dg); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("the decoded graph does not encode to the stored bytes (%v)", err)
			}
		})
	}
	// The decode's goroutines have called Done when it returns, and may
	// still be exiting: a leak is one still there after a while.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before decoding, %d after", before, after)
	}
}

// TestDecodeParallelLaterChunk puts a malformed, an unusual or an invalid
// step in a later chunk, and a cut inside a step: the parallel decode
// takes what one pass takes and gives the same graph, and Decode gives the
// reference's graph or error, word for word.
func TestDecodeParallelLaterChunk(t *testing.T) {
	good := string(storedBytes(t, 600))
	at := strings.Index(good, `{"name":"s550",`)
	if at < 0 {
		t.Fatal("no step s550")
	}
	later := func(old, new string) string {
		i := strings.Index(good[at:], old)
		if i < 0 {
			t.Fatalf("%q is not in step s550 or after", old)
		}
		return good[:at+i] + new + good[at+i+len(old):]
	}
	// A literal that spells the start of steps, many times over: cuts
	// fall inside it, and the chunk before fails at its end.
	fake := `[` + strings.Repeat(`{"name":"x","hash":"y"},`, 400) + `{"name":"x","hash":"y"}]`
	cases := map[string]struct {
		src   string
		taken bool
	}{
		"malformed json":   {later(`"on_error":"fail"`, `"on_error":fail`), false},
		"unknown field":    {later(`"join":"all"`, `"join":"all","colour":1`), false},
		"wrong type":       {later(`"join":"all"`, `"join":1`), false},
		"duplicate field":  {later(`"join":"all"`, `"join":"all","join":"any"`), false},
		"cut short":        {good[:at+40], false},
		"trailing comma":   {strings.Replace(good, `}}}}],"outputs"`, `}}}},],"outputs"`, 1), false},
		"unknown need":     {later(`"needs":["s550"]`, `"needs":["nope"]`), true},
		"unknown kind":     {later(`"kind":"set"`, `"kind":"run"`), true},
		"need out of turn": {later(`"needs":["s550"]`, `"needs":["s590"]`), true},
		"escaped name":     {later(`"name":"s560"`, `"name":"s\u0035\"60"`), true},
		"white space":      {later(`},{"name":"s560"`, "} ,\n{ \"name\" : \"s560\""), true},
		"fake step starts": {later(`"lit":"step 551 of 600"`, `"lit":`+fake), true},
		"null step":        {later(`{"name":"s560"`, `null,{"name":"s560"`), true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			b := []byte(c.src)
			_, ok := graph.DecodeFastSplit(b, graph.NewTypeInterner(), graph.FastSplit{})
			if ok != c.taken {
				t.Fatalf("one pass takes it: %v, want %v", ok, c.taken)
			}
			if checkFast(t, b) != c.taken {
				t.Fatalf("the fast decoders take it: %v, want %v", !c.taken, c.taken)
			}
			rg, rerr := graph.DecodeReference(b)
			for _, sp := range []graph.FastSplit{forcedSplit, manyChunks, {Workers: 2, ChunkBytes: 1000}, {Workers: 3, ChunkBytes: len(b) / 3}} {
				g, err := graph.DecodeSplit(b, sp)
				switch {
				case (err == nil) != (rerr == nil):
					t.Fatalf("%+v: Decode error %v, reference error %v", sp, err, rerr)
				case err != nil && err.Error() != rerr.Error():
					t.Fatalf("%+v: Decode error\n%v\nreference error\n%v", sp, err, rerr)
				case err == nil && !reflect.DeepEqual(g, rg):
					t.Fatalf("%+v: Decode and the reference differ", sp)
				}
			}
		})
	}
	// The fake step starts are taken for cuts, the chunks before them
	// fail and the record is decoded again in one pass; so is the one with
	// a malformed step.
	b := []byte(cases["fake step starts"].src)
	start := strings.Index(string(b), `"steps":[`) + len(`"steps":[`)
	lit := bytes.Index(b, []byte(fake))
	inside := false
	for _, c := range graph.FastCuts(b, start, 4*manyChunks.Workers) {
		inside = inside || (c > lit && c < lit+len(fake))
	}
	if !inside {
		t.Fatal("no cut falls inside the literal")
	}
	for _, name := range []string{"fake step starts", "malformed json"} {
		if _, _, retry := graph.DecodeFastOnce([]byte(cases[name].src), graph.NewTypeInterner(), manyChunks); !retry {
			t.Fatalf("%s: the parallel decode did not fail", name)
		}
	}
}

// manyChunks splits the steps into 64 chunks.
var manyChunks = graph.FastSplit{Workers: 16, ChunkBytes: 1}
