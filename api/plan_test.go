package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// TestVersionCheckWire: a version check survives its wire form (JSON and
// back) whole, each kind of refusal included, so a plan through a server
// words a refusal as one on the store does.
func TestVersionCheckWire(t *testing.T) {
	v := func(s string, rev int) store.Version {
		sv, err := graph.ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return store.Version{Workflow: "ship", Version: s, Major: sv.Major, Minor: sv.Minor, Patch: sv.Patch, Hash: "h" + s, Revision: rev}
	}
	sv := func(s string) graph.SemVer { x, _ := graph.ParseVersion(s); return x }
	changes := []graph.Change{{Path: `step "notify"`, What: "added", Bump: graph.BumpMinor}, {Path: "workflow", What: "description changed", Bump: graph.BumpPatch}}
	cases := map[string]interp.VersionCheck{
		"first":   {},
		"new":     {Against: v("1.0.0", 1), Newest: v("1.0.0", 1), NewMajor: true},
		"replace": {Against: v("0.2.0", 2), Newest: v("0.2.0", 2), Replace: true, Revision: 3, Changes: changes},
		"too small": {Against: v("1.0.0", 1), Newest: v("1.0.0", 1), Changes: changes, Refused: &graph.BumpError{Workflow: "ship", Old: sv("1.0.0"), New: sv("1.0.1"),
			Declared: graph.BumpPatch, Required: graph.BumpMinor, Changes: changes, Reason: graph.BumpTooSmall}},
		"lower": {Against: v("2.0.0", 1), Newest: v("2.0.0", 1), Refused: &graph.BumpError{Workflow: "ship", Old: sv("2.0.0"), New: sv("1.1.0"),
			Declared: graph.BumpNone, Required: graph.BumpMajor, Changes: changes, Reason: graph.BumpLower}},
		"same version": {Against: v("1.0.0", 1), Newest: v("1.1.0", 1), Refused: &graph.BumpError{Workflow: "ship", Old: sv("1.0.0"), New: sv("1.0.0"),
			Declared: graph.BumpNone, Required: graph.BumpPatch, Changes: changes, Reason: graph.BumpSameVersion}},
		"in use": {Against: v("0.2.0", 1), Newest: v("0.2.0", 1), Changes: changes, Refused: &store.VersionInUseError{Workflow: "ship", Version: "0.2.0", Run: "01RUN", Status: store.RunWaiting, Runs: 3}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			version := "1.0.1"
			if iu := (*store.VersionInUseError)(nil); errors.As(c.Refused, &iu) {
				version = iu.Version
			}
			b, err := json.Marshal(PlannedWorkflow{Workflow: "ship", Version: version, Check: VersionCheckOf(c)})
			if err != nil {
				t.Fatal(err)
			}
			var p PlannedWorkflow
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			got, err := p.VersionCheck()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c) {
				t.Fatalf("through the wire:\n%#v\nwant\n%#v\n(%s)", got, c, b)
			}
		})
	}
	// Another refusal keeps its words.
	p := PlannedWorkflow{Workflow: "ship", Version: "x", Check: VersionCheckOf(interp.VersionCheck{Refused: errors.New("version \"x\" is not MAJOR.MINOR.PATCH")})}
	got, err := p.VersionCheck()
	if err != nil || got.Refused == nil || got.Refused.Error() != `version "x" is not MAJOR.MINOR.PATCH` {
		t.Fatalf("refusal %v (%v), want its words", got.Refused, err)
	}
}
