package interp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

func convertGraph() *graph.Graph {
	return &graph.Graph{
		Workflow: "ship",
		Inputs: []graph.Input{
			{Name: "order_id", Type: graph.TypeString},
			{Name: "amount", Type: graph.TypeNumber},
			{Name: "express", Type: graph.TypeBool, Default: json.RawMessage("false")},
			{Name: "tags", Type: graph.ListOf(graph.TypeString), Default: json.RawMessage("[]")},
			{Name: "extra", Type: graph.TypeAny, Default: json.RawMessage("null")},
		},
	}
}

// TestConvertInputs: NAME=VALUE texts are converted by the declared type
// and win over the object's values; every problem is a *ConvertError that
// says which rule it broke and about which input.
func TestConvertInputs(t *testing.T) {
	ctx := context.Background()
	got, err := ConvertInputs(ctx, ConvertInputsParams{
		Graph:  convertGraph(),
		Object: map[string]any{"order_id": "A-1", "amount": 3.0},
		Pairs:  []string{"amount=4", "express=true", `tags=["a"]`, "extra=not json", "order_id=B=2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"order_id": "B=2", "amount": 4.0, "express": true, "tags": []any{"a"}, "extra": "not json"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConvertInputs = %#v, want %#v", got, want)
	}
	for _, tt := range []struct {
		name   string
		object map[string]any
		pairs  []string
		want   ConvertError
	}{
		{"no equals", nil, []string{"order_id"}, ConvertError{Problem: InputNotPair, Pair: "order_id"}},
		{"empty name", nil, []string{"=x"}, ConvertError{Problem: InputNotPair, Pair: "=x"}},
		{"unknown pair", nil, []string{"colour=red"}, ConvertError{Problem: InputUnknown, Name: "colour", Pair: "colour=red"}},
		{"unknown in object", map[string]any{"colour": "red"}, nil, ConvertError{Problem: InputUnknown, Name: "colour"}},
		{"not a number", nil, []string{"amount=ten"}, ConvertError{Problem: InputBadValue, Name: "amount", Pair: "amount=ten"}},
		{"not a bool", nil, []string{"express=yes"}, ConvertError{Problem: InputBadValue, Name: "express", Pair: "express=yes"}},
		{"wrong element", nil, []string{"tags=[1]"}, ConvertError{Problem: InputBadValue, Name: "tags", Pair: "tags=[1]"}},
		{"trailing JSON", nil, []string{"tags=[] []"}, ConvertError{Problem: InputBadValue, Name: "tags", Pair: "tags=[] []"}},
		{"object type", map[string]any{"order_id": 5.0, "amount": 1.0}, nil, ConvertError{Problem: InputBadValue, Name: "order_id"}},
		{"missing", nil, nil, ConvertError{Problem: InputMissing, Missing: []string{"amount", "order_id"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ConvertInputs(ctx, ConvertInputsParams{Graph: convertGraph(), Object: tt.object, Pairs: tt.pairs})
			var ce *ConvertError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *ConvertError", err)
			}
			if ce.Problem != tt.want.Problem || ce.Name != tt.want.Name || ce.Pair != tt.want.Pair ||
				!reflect.DeepEqual(ce.Missing, tt.want.Missing) || ce.Workflow != "ship" {
				t.Fatalf("got %+v, want %+v", *ce, tt.want)
			}
			if ce.Problem == InputBadValue && (ce.Err == nil || ce.Type == nil) {
				t.Fatalf("a bad value without its reason or type: %+v", *ce)
			}
			if ce.Problem == InputUnknown && !reflect.DeepEqual(ce.Declared, []string{"amount", "express", "extra", "order_id", "tags"}) {
				t.Fatalf("declared %q", ce.Declared)
			}
		})
	}
}

// TestDecodeJSONValueTrailing: data after the value is refused, a stray
// closing bracket too (json.Decoder.More is false before one, which let
// `{"a": 1}}` through as an inputs file).
func TestDecodeJSONValueTrailing(t *testing.T) {
	wantJSONErrorAt(t, map[string]int64{`{"a": 1}}`: 8, `0}`: 1, `[1]]`: 3, `1 2`: 2, "{} \n ]": 5})
	var v any
	if err := DecodeJSONValue([]byte(" {\"a\": [1]} \n"), &v); err != nil {
		t.Errorf("one value with white space around it: %v", err)
	}
}

// TestDecodeJSONValueUTF8: text that is not UTF-8 is refused at its first
// bad byte (encoding/json turned it into U+FFFD, so a signal's data or an
// inputs file in Latin-1 changed unseen); found by FuzzDecodeBody.
func TestDecodeJSONValueUTF8(t *testing.T) {
	wantJSONErrorAt(t, map[string]int64{"\"caf\xe9\"": 4, "{\"a\": \"\xff\"}": 7, "[\"\xed\xa0\x80\"]": 2})
	var v any
	if err := DecodeJSONValue([]byte(`"café 😀 \ud83d\ude00"`), &v); err != nil || v != "café 😀 😀" {
		t.Errorf("UTF-8 text: %v, %v", v, err)
	}
}

// TestDecodeJSONValueDuplicateKey: an object with a key given twice is
// refused at the second, as the API refuses it in a body (api.md §8):
// encoding/json kept the last one unseen, so an inputs file, an --input
// value or a signal's data with a key written twice ran with a value the
// user may not have meant. An input of type any is JSON when it parses,
// and refused the same way.
func TestDecodeJSONValueDuplicateKey(t *testing.T) {
	wantJSONErrorAt(t, map[string]int64{`{"a": 1, "a": 2}`: 9, "[{\"b\": {}, \"c\": [{\"x\": 1,\n \"x\": 1}]}]": 27})
	var v any
	if err := DecodeJSONValue([]byte(`{"a": {"b": 1}, "b": {"a": 1}}`), &v); err != nil {
		t.Errorf("the same key in different objects: %v", err)
	}
	_, err := ConvertInputs(context.Background(), ConvertInputsParams{
		Graph: convertGraph(),
		Pairs: []string{"order_id=A", "amount=1", `extra={"k": 1, "k": 2}`},
	})
	var ce *ConvertError
	if !errors.As(err, &ce) || ce.Problem != InputBadValue || ce.Name != "extra" {
		t.Errorf("an any input with a key twice: %v, want an InputBadValue of extra", err)
	}
}

// wantJSONErrorAt checks that DecodeJSONValue refuses each text with a
// *JSONError at its byte offset.
func wantJSONErrorAt(t *testing.T, offsets map[string]int64) {
	t.Helper()
	for in, off := range offsets {
		var v any
		err := DecodeJSONValue([]byte(in), &v)
		var je *JSONError
		if !errors.As(err, &je) || je.Offset != off {
			t.Errorf("DecodeJSONValue(%q) = %v, want a JSONError at byte %d", in, err, off)
		}
	}
}
