package lang

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// TestScheduleBlock compiles schedule blocks into the graph: defaults
// resolved, sorted by name, inputs evaluated with schedule.* bound, and
// the stored encoding round-trips.
func TestScheduleBlock(t *testing.T) {
	g := graphOf(t, loadValid(t, "schedules.hcl"), "report")
	if len(g.Schedules) != 2 || g.Schedules[0].Name != "hourly" || g.Schedules[1].Name != "nightly" {
		t.Fatalf("schedules = %+v, want hourly and nightly in name order", g.Schedules)
	}
	h, n := g.Schedules[0], g.Schedules[1]
	if h.Every != "1h" || h.Cron != "" || h.Overlap != "skip" || h.CatchUp != "latest" || h.MaxCatchUp != 0 || h.Timezone != "" {
		t.Errorf("hourly = %+v, want every 1h with the defaults skip/latest in UTC", h)
	}
	if n.Cron != "0 2 * * *" || n.Timezone != "Europe/Berlin" || n.Overlap != "queue" || n.CatchUp != "all" || n.MaxCatchUp != 24 || n.JitterMS != 30000 {
		t.Errorf("nightly = %+v", n)
	}
	b, err := graph.Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	back, err := graph.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if d := graph.Diff(g, back); len(d) != 0 {
		t.Fatalf("round trip changed the graph: %v", d)
	}
	p, err := expr.Load(back)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.EvalValue(context.Background(), back.Schedules[1].Inputs, &expr.Activation{
		Schedule: map[string]any{"time": "2026-03-29T03:00:00+02:00", "date": "2026-03-29", "name": "nightly"},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	if m["date"] != "2026-03-29" || m["label"] != "nightly at 2026-03-29T03:00:00+02:00" {
		t.Errorf("inputs = %v", m)
	}
}

// TestScheduleChangeIsPatch: adding, changing and removing a schedule are
// PATCH changes that leave every step hash as it was; a graph without
// schedules encodes no "schedules" key.
func TestScheduleChangeIsPatch(t *testing.T) {
	src, err := os.ReadFile("testdata/valid/schedules.hcl")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(text string) *graph.Graph {
		t.Helper()
		m, diags := LoadFile("x.hcl", []byte(text))
		if diags.HasErrors() {
			t.Fatalf("%s", diags.Error())
		}
		return m.Workflows[0].Graph
	}
	base := compile(string(src))
	changed := compile(strings.Replace(string(src), `"0 2 * * *"`, `"30 3 * * *"`, 1))
	start := strings.Index(string(src), "  schedule \"nightly\"")
	end := strings.Index(string(src), "  step \"s\"")
	none := compile(string(src)[:start] + string(src)[end:])

	for _, tc := range []struct {
		name     string
		old, new *graph.Graph
		want     string
	}{
		{"changed", base, changed, `schedule "nightly" changed (cron "0 2 * * *" → cron "30 3 * * *"): PATCH`},
		{"removed", base, none, `schedule "hourly" removed: PATCH`},
		{"added", none, base, `schedule "hourly" added (every "1h"): PATCH`},
	} {
		d := graph.Diff(tc.old, tc.new)
		var texts []string
		for _, c := range d {
			texts = append(texts, c.String())
		}
		if graph.RequiredBump(d) != graph.BumpPatch || !strings.Contains(strings.Join(texts, "\n"), tc.want) {
			t.Errorf("%s: diff = %q, want PATCH with %q", tc.name, texts, tc.want)
		}
		for i := range tc.old.Steps {
			if tc.old.Steps[i].Hash != tc.new.Steps[i].Hash {
				t.Errorf("%s: step hash changed", tc.name)
			}
		}
	}
	b, err := graph.Encode(none)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"schedules"`) {
		t.Errorf("a graph without schedules encodes a schedules key: %s", b)
	}
}

// TestScheduleMissingInputsWords: the details of two cron and input
// mistakes read as sentences: several missing inputs are "them", and a
// day that never comes is quoted after its field as the other field
// mistakes are ("Field 3 (day-of-month) "30": ...").
func TestScheduleMissingInputsWords(t *testing.T) {
	_, diags := LoadFile("w.hcl", []byte(`workflow "w" {
  version = "1.0.0"
  input "a" { type = string }
  input "b" { type = string }
  schedule "both" {
    every = "1h"
  }
  schedule "feb" {
    cron   = "0 0 30 2 *"
    inputs = { a = "x", b = "y" }
  }
  step "s" {
    exec { command = ["true"] }
  }
}
`))
	var details []string
	for _, d := range diags {
		details = append(details, d.Detail)
	}
	all := strings.Join(details, "\n")
	for _, want := range []string{
		`requires inputs "a" and "b", which schedule "both" does not give: add them to its inputs = { ... }.`,
		`Field 3 (day-of-month) "30": no month the expression names has such a day, so it would never fire.`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("details:\n%s\nwant one with %q", all, want)
		}
	}
}
