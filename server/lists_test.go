package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

func TestListRuns(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	a.apply(shipV1)
	var ids []string
	for i := range 5 {
		ids = append(ids, a.start("hello", fmt.Sprintf(`{"inputs": {"name": "n%d"}}`, i)))
		a.clk.Advance(time.Millisecond) // ids sort by their creation time
	}
	ship := a.start("ship", `{"inputs": {"order": "K-1"}}`)
	// Pages of 2, newest first, through the cursor; the elements are what
	// runs --json prints.
	var got []string
	path := "/v1/runs?workflow=hello&limit=2"
	for pages := 0; ; pages++ {
		p := a.do(store.ScopeRead, http.MethodGet, path, "").want(t, http.StatusOK).json(t)
		for _, r := range p["runs"].([]any) {
			got = append(got, r.(map[string]any)["run_id"].(string))
		}
		c, _ := p["next_cursor"].(string)
		if c == "" {
			break
		}
		if pages > 5 {
			t.Fatal("the cursor does not end")
		}
		path = "/v1/runs?workflow=hello&limit=2&cursor=" + c
	}
	if len(got) != 5 || got[0] != ids[4] || got[4] != ids[0] {
		t.Fatalf("pages listed %v, want %v newest first", got, ids)
	}
	all := a.do(store.ScopeRead, http.MethodGet, "/v1/runs", "").want(t, http.StatusOK).json(t)
	if n := len(all["runs"].([]any)); n != 6 || all["next_cursor"] != nil {
		t.Fatalf("all runs: %d, cursor %v", n, all["next_cursor"])
	}
	byKey := a.do(store.ScopeRead, http.MethodGet, "/v1/runs?workflow=ship&key=K-1", "").want(t, http.StatusOK).json(t)
	if rs := byKey["runs"].([]any); len(rs) != 1 || rs[0].(map[string]any)["run_id"] != ship {
		t.Fatalf("by key: %v", rs)
	}
	keyOnly := a.do(store.ScopeRead, http.MethodGet, "/v1/runs?key=K-1&status=failed,pending", "").want(t, http.StatusOK).json(t)
	if rs := keyOnly["runs"].([]any); len(rs) != 1 || rs[0].(map[string]any)["run_id"] != ship {
		t.Fatalf("by key alone, pending or failed: %v", rs)
	}
	none := a.do(store.ScopeRead, http.MethodGet, "/v1/runs?status=completed", "").want(t, http.StatusOK).json(t)
	if rs := none["runs"].([]any); len(rs) != 0 {
		t.Fatalf("completed runs: %v", rs)
	}
	last := a.do(store.ScopeRead, http.MethodGet, "/v1/runs/@last", "").want(t, http.StatusOK).json(t)
	if last["run_id"] != ship {
		t.Fatalf("@last is %v, want %s", last["run_id"], ship)
	}
	for q, want := range map[string]string{
		"status=done":     `status "done" is not one of`,
		"limit=0":         `limit "0" is not a whole number from 1 to 1000`,
		"limit=x":         `limit "x"`,
		"cursor=abc":      "the cursor is not one this server gave",
		"status=failed,x": `status "x" is not one of`,
		"since=yesterday": `since "yesterday" is not an RFC 3339 time`,
		"children=maybe":  `children "maybe" is not true or false`,
		"wokflow=hello":   `unknown query parameter "wokflow"`,
		"limit=1&limit=2": `"limit" is given 2 times`,
	} {
		a.do(store.ScopeRead, http.MethodGet, "/v1/runs?"+q, "").problem(t, http.StatusBadRequest, want)
	}
}

func TestListStored(t *testing.T) {
	a := newAPI(t)
	a.apply(helloHCL)
	a.apply(shipV1)
	a.apply(shipV2)
	var list []map[string]any
	decode(t, a.do(store.ScopeRead, http.MethodGet, "/v1/workflows", "").want(t, http.StatusOK).body, &list)
	if len(list) != 2 || list[1]["workflow"] != "ship" || list[1]["newest"] != "2.0.0" || list[1]["versions"] != float64(2) {
		t.Fatalf("workflows: %v", list)
	}
	decode(t, a.do(store.ScopeRead, http.MethodGet, "/v1/workflows/ship/versions", "").want(t, http.StatusOK).body, &list)
	if len(list) != 2 || list[0]["version"] != "1.0.0" || list[1]["version"] != "2.0.0" {
		t.Fatalf("versions: %v", list)
	}
	a.do(store.ScopeRead, http.MethodGet, "/v1/workflows/shp/versions", "").problem(t, http.StatusNotFound, `the nearest stored workflows are "ship"`)
	// Dead letters, breakers and schedules: the CLI's --json forms, empty.
	for _, p := range []string{"/v1/dead-letters", "/v1/dead-letters?all=true", "/v1/breakers", "/v1/schedules"} {
		if b := string(a.do(store.ScopeRead, http.MethodGet, p, "").want(t, http.StatusOK).body); b != "[]\n" {
			t.Fatalf("%s = %q, want []", p, b)
		}
	}
	a.do(store.ScopeRead, http.MethodGet, "/v1/dead-letters?all=maybe", "").problem(t, http.StatusBadRequest, `all "maybe" is not true or false`)
	a.do(store.ScopeRead, http.MethodGet, "/v1/breakers?x=1", "").problem(t, http.StatusBadRequest, `unknown query parameter "x"`)
}

// TestListDeadLetter: a dead letter is listed as dlq list --json prints
// it (one encoder: interp.DeadLetters).
func TestListDeadLetter(t *testing.T) {
	a := newAPI(t)
	a.apply(`
workflow "each" {
  version = "1.0.0"
  step "items" {
    foreach {
      items      = "['a', 'b']"
      on_failure = "dead_letter"
    }
    exec { command = ["sh", "-c", "echo bad {{ item }} >&2; exit 3"] }
  }
}`)
	id := a.start("each", `{}`)
	a.drive(id)
	ds, err := a.eng.DeadLetterList(a.ctx, false)
	if err != nil || len(ds) != 2 {
		t.Fatalf("dead letters stored: %v, %v; want 2", ds, err)
	}
	var got []map[string]any
	decode(t, a.do(store.ScopeRead, http.MethodGet, "/v1/dead-letters", "").want(t, http.StatusOK).body, &got)
	want := interp.DeadLetters(ds, false)
	if len(got) != 2 || got[0]["run_id"] != id || got[0]["step"] != want[0].Step || got[1]["item"] != "b" {
		t.Fatalf("dead letters %v, want %v", got, want)
	}
}
