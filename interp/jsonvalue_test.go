package interp

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// TestAppendValueJSONMatchesMarshal: mustJSON's own encoder writes what
// json.Marshal writes, byte for byte, for every kind of value it takes,
// and leaves the rest to encoding/json.
func TestAppendValueJSONMatchesMarshal(t *testing.T) {
	fixed := []any{
		nil, true, false, 0.0, math.Copysign(0, -1), 1.0, -1.5, 1e-6, 1e-7, 9.999e-7, 1e20, 1e21, 123456789e15, math.MaxFloat64, math.SmallestNonzeroFloat64,
		0.1 + 0.2, float64(1 << 53), 3, int64(1<<62 + 1), uint64(math.MaxUint64), "", "plain", `q"uote`, `back\slash`, "<a href='x'>&</a>",
		"tab\tnew\nline", "\x00\x1f", "é ü 日本", "\u2028\u2029", "bad \xff utf8", "emoji 🎉",
		[]any{}, []any{nil, 1.0, "x", []any{true}}, map[string]any{}, map[string]any{"b": 1.0, "a": "x", "<k>": nil, "é": []any{}},
		map[string]any{"status": 200.0, "headers": map[string]any{"content-type": "application/json"}, "body": map[string]any{"id": 7.0}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		fixed = append(fixed, randomValue(rng, 0))
	}
	for _, v := range fixed {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustJSON(v); string(got) != string(want) {
			t.Fatalf("mustJSON(%#v) = %s, want %s", v, got, want)
		}
	}
	// Values it does not take are left whole to encoding/json.
	for _, v := range []any{
		map[string]any{"raw": json.RawMessage(`{"a":1}`), "n": json.Number("12")},
		map[string]any{"e": &stepError{Kind: "http", Message: "x"}},
		[]any{int8(3), float32(1.5)},
	} {
		want, _ := json.Marshal(v)
		if got := mustJSON(v); string(got) != string(want) {
			t.Errorf("mustJSON(%#v) = %s, want %s", v, got, want)
		}
	}
	if _, ok := appendValueJSON(nil, math.NaN(), 0); ok {
		t.Error("NaN encoded")
	}
}

func randomValue(rng *rand.Rand, depth int) any {
	n := 6
	if depth < 3 {
		n = 8
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(50)-25))
	case 3:
		return int64(rng.Uint64())
	case 4, 5:
		return randomString(rng)
	case 6:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = randomValue(rng, depth+1)
		}
		return l
	default:
		m := map[string]any{}
		for range rng.IntN(5) {
			m[randomString(rng)] = randomValue(rng, depth+1)
		}
		return m
	}
}

func randomString(rng *rand.Rand) string {
	r := []rune("ab<>&\"\\\n\x01é日\u2028 ")
	s := make([]rune, rng.IntN(8))
	for i := range s {
		s[i] = r[rng.IntN(len(r))]
	}
	return string(s)
}

// TestMustJSONAllocs: encoding an http step's output (what every http
// step stores) allocates its buffer, not a reflection value per key.
func TestMustJSONAllocs(t *testing.T) {
	out := map[string]any{
		"status": 200.0, "body": map[string]any{"ok": true, "id": 7.0},
		"headers": map[string]any{"content-type": "application/json", "date": "Sat, 05 Dec 2026 17:00:00 GMT", "content-length": "11"},
		"request": map[string]any{"method": "GET", "url": "http://127.0.0.1:8080/x/1",
			"headers": map[string]any{"idempotency-key": "01JABCDEF/s1", "traceparent": "00-abc-def-01"}},
	}
	if n := testing.AllocsPerRun(100, func() { _ = mustJSON(out) }); n > 8 {
		t.Errorf("mustJSON of an http output: %v allocations, want at most 8", n)
	}
}

// FuzzMustJSON: for any value decoded from JSON (what the engine stores),
// mustJSON writes what json.Marshal writes.
func FuzzMustJSON(f *testing.F) {
	for _, s := range []string{`null`, `{"a":[1,2.5,"<x>&"],"b":{"c":true}}`, `"\u2028 \ud800"`, `[1e21,1e-7,-0]`, `12345678901234567890`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if graph.UnmarshalJSON(b, &v) != nil {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			return
		}
		if got := mustJSON(v); string(got) != string(want) {
			t.Fatalf("mustJSON(%s) = %s, want %s", b, got, want)
		}
	})
}
