package graph

import (
	"reflect"
	"strings"
	"testing"
)

func TestMigrationPlan(t *testing.T) {
	// ship_standard was skipped by the switch: a settled step.
	all := []string{"poll", "price", "charge", "route", "ship_express", "ship_standard", "label"}
	cases := []struct {
		name      string
		mutate    func(t *testing.T, g *Graph)
		completed []string
		keep      []string
		rerun     []string
	}{
		{"unchanged keeps everything", func(*testing.T, *Graph) {}, all,
			[]string{"poll", "price", "charge", "route", "ship_express", "ship_standard", "label"}, nil},
		{"policy change keeps everything", func(t *testing.T, g *Graph) {
			irFind(t, g, "charge").TimeoutMS = 99000
			irFind(t, g, "charge").Retry = nil
		}, all, []string{"poll", "price", "charge", "route", "ship_express", "ship_standard", "label"}, nil},
		{"changed step and its downstream rerun", func(t *testing.T, g *Graph) {
			irFind(t, g, "charge").Action.HTTP.URL = irLit("http://other", TypeString)
		}, all, []string{"poll", "price"}, []string{"charge", "route", "ship_express", "ship_standard", "label"}},
		{"changed leaf only reruns itself", func(t *testing.T, g *Graph) {
			irFind(t, g, "label").Action = irExec("./bin/label2")
		}, all, []string{"poll", "price", "charge", "route", "ship_express", "ship_standard"}, []string{"label"}},
		{"upstream not completed means rerun", func(*testing.T, *Graph) {}, []string{"charge", "poll"},
			[]string{"poll"}, []string{"charge"}},
		{"removed step is dropped", func(t *testing.T, g *Graph) { irDrop(g, "poll") }, all,
			[]string{"price", "charge", "route", "ship_express", "ship_standard", "label"}, nil},
		{"new upstream step reruns its user", func(t *testing.T, g *Graph) {
			g.Steps = append(g.Steps, irStep("audit", irExec("./audit")))
			irFind(t, g, "poll").Needs = []string{"audit"}
		}, all, []string{"price", "charge", "route", "ship_express", "ship_standard", "label"}, []string{"poll"}},
		{"skip not reported reruns what follows", func(*testing.T, *Graph) {},
			[]string{"poll", "price", "charge", "route", "ship_express", "label"},
			[]string{"poll", "price", "charge", "route", "ship_express"}, []string{"label"}},
		{"nothing completed", func(*testing.T, *Graph) {}, nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, g := irShip(t), irShip(t)
			tc.mutate(t, g)
			g.Version = "2.0.0"
			Seal(g)
			keep, rerun, err := MigrationPlan(old, g, tc.completed)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(keep, tc.keep) || !reflect.DeepEqual(rerun, tc.rerun) {
				t.Fatalf("keep %v rerun %v; want keep %v rerun %v", keep, rerun, tc.keep, tc.rerun)
			}
		})
	}
}

func TestMigrationPlanErrors(t *testing.T) {
	old := irShip(t)
	g := irShip(t)
	if _, _, err := MigrationPlan(old, g, []string{"ghost"}); err == nil || !strings.Contains(err.Error(), `completed step "ghost" is not a step`) {
		t.Errorf("unknown completed step: err = %v", err)
	}
	g.Steps[0].Hash = ""
	if _, _, err := MigrationPlan(old, g, nil); err == nil || !strings.Contains(err.Error(), "must be sealed") {
		t.Errorf("unsealed graph: err = %v", err)
	}
	other := irShip(t)
	other.Workflow = "other"
	if _, _, err := MigrationPlan(old, other, nil); err == nil || !strings.Contains(err.Error(), "different workflows") {
		t.Errorf("other workflow: err = %v", err)
	}
	// A forged graph whose hash equals but output type differs.
	forged := irShip(t)
	s := irFind(t, forged, "price")
	s.OutputType = TypeString
	if _, _, err := MigrationPlan(old, forged, []string{"price"}); err == nil || !strings.Contains(err.Error(), "output type changed") {
		t.Errorf("forged hash: err = %v", err)
	}
}
