package graph

import (
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// Any integer of int64 or uint64 in a JSON body decodes to a value that
// encodes back to the same digits (a seeded loop plus the edges); on the
// old decoding, json.Unmarshal into any, past 2^53 it came back rounded.
func TestUnmarshalJSONExactIntegers(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	var texts []string
	for _, i := range []int64{0, 1, -1, 1 << 53, 1<<53 + 1, -(1<<53 + 1), math.MaxInt64, math.MinInt64} {
		texts = append(texts, strconv.FormatInt(i, 10))
	}
	texts = append(texts, strconv.FormatUint(math.MaxUint64, 10), strconv.FormatUint(1<<63, 10))
	for range 2000 {
		texts = append(texts, strconv.FormatInt(int64(rng.Uint64()), 10))
	}
	for _, n := range texts {
		body := `{"id": ` + n + `, "l": [` + n + `]}`
		var v any
		if err := UnmarshalJSON([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"id":` + n + `,"l":[` + n + `]}`; string(b) != want {
			t.Fatalf("%s came back as %s", want, b)
		}
	}
}

// Numbers that were exact as a float64 keep that Go form.
func TestUnmarshalJSONSmallStayFloat(t *testing.T) {
	var v any
	if err := UnmarshalJSON([]byte(`[1, 9007199254740992, 1.5, 12345678901234567890123]`), &v); err != nil {
		t.Fatal(err)
	}
	for i, e := range v.([]any) {
		if _, ok := e.(float64); !ok {
			t.Errorf("element %d is %T, want float64", i, e)
		}
	}
	if err := UnmarshalJSON([]byte(`{"id": 12345678901234567} x`), &v); err == nil {
		t.Error("trailing data accepted")
	}
}
