package interp

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// Any int64 in an http body or stdout JSON is stored, as the step's
// output, with the digits it was written with: parseOutputJSON, then the
// store's encoding. A seeded loop plus the edges; on the old code every
// integer past 2^53 that a double cannot hold came back rounded.
func TestOutputJSONKeepsInt64(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	ns := []int64{0, -1, 1 << 53, 1<<53 + 1, -(1<<53 + 1), math.MaxInt64, math.MinInt64}
	for range 2000 {
		ns = append(ns, int64(rng.Uint64())>>uint(rng.Intn(64)))
	}
	for _, i := range ns {
		n := strconv.FormatInt(i, 10)
		v, ok := parseOutputJSON([]byte(`{"id": ` + n + `}`))
		if !ok {
			t.Fatalf("%s: not parsed", n)
		}
		if got, want := string(mustJSON(normalizeJSON(v))), `{"id":`+n+`}`; got != want {
			t.Fatalf("stored %s, want %s", got, want)
		}
	}
}
