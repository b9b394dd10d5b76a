package sqlrow

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestSharedEncodings: what the two backends wrote each in their own copy
// and now share: a version's step count, a breaker event's data and the
// schema version of the embedded migrations.
func TestSharedEncodings(t *testing.T) {
	if StepCountArg(0) != nil || StepCountArg(-1) != nil {
		t.Error("an unknown step count is not NULL")
	}
	if got := StepCountArg(7); got != 7 {
		t.Errorf("StepCountArg(7) = %v", got)
	}
	until := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", 3600))
	for _, c := range []struct {
		b    store.Breaker
		want string
	}{
		{store.Breaker{Name: "db", State: store.BreakerClosed, Failures: 2, OpenUntil: until}, `{"breaker":"db","state":"closed","failures":2}`},
		{store.Breaker{Name: "db", State: store.BreakerOpen, Failures: 5, OpenUntil: until}, `{"breaker":"db","state":"open","failures":5,"open_until":"2026-01-02T02:04:05.006Z"}`},
	} {
		if got := string(BreakerEventData(c.b)); got != c.want {
			t.Errorf("BreakerEventData(%+v) = %s, want %s", c.b, got, c.want)
		}
	}
	fsys := fstest.MapFS{
		"m/0001_init.sql": {Data: []byte("CREATE TABLE a (x INT);")},
		"m/0002_more.sql": {Data: []byte("CREATE TABLE b (x INT);")},
		"gap/0001_a.sql":  {Data: []byte("")},
		"gap/0003_c.sql":  {Data: []byte("")},
	}
	if v := SchemaVersion(fsys, "m"); v != 2 {
		t.Errorf("SchemaVersion = %d, want 2", v)
	}
	if v := SchemaVersion(fsys, "gap"); v != 0 {
		t.Errorf("SchemaVersion of migrations with a gap = %d, want 0", v)
	}
	if v := SchemaVersion(fsys, "missing"); v != 0 {
		t.Errorf("SchemaVersion of no directory = %d, want 0", v)
	}
}
