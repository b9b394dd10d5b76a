package interp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// decisionPlanJSON is the JSON form of a DecisionPlan (GET
// /v1/runs/{id}/decision/plan): what a face shows before a person
// chooses. A plan read back from it carries what is shown, not what
// Decide needs; Decide reads its own.
type decisionPlanJSON struct {
	Run          store.Run    `json:"run"`
	From         string       `json:"from"`
	To           string       `json:"to"`
	Bump         string       `json:"bump"`
	Changes      []changeJSON `json:"changes"`
	Keep         []string     `json:"keep"`
	Rerun        []string     `json:"rerun"`
	NewError     string       `json:"new_error,omitempty"`
	MigrateError string       `json:"migrate_error,omitempty"`
}

type changeJSON struct {
	Path string `json:"path"`
	What string `json:"what"`
	Bump string `json:"bump"`
}

// MarshalJSON encodes the plan as a face shows it.
func (p *DecisionPlan) MarshalJSON() ([]byte, error) {
	j := decisionPlanJSON{Run: p.Run, From: p.From, To: p.To, Bump: p.Bump.String(),
		Changes: []changeJSON{}, Keep: nonNil(p.Keep), Rerun: nonNil(p.Rerun)}
	for _, c := range p.Changes {
		j.Changes = append(j.Changes, changeJSON{Path: c.Path, What: c.What, Bump: c.Bump.String()})
	}
	if p.NewErr != nil {
		j.NewError = p.NewErr.Error()
	}
	if p.MigrateErr != nil {
		j.MigrateError = p.MigrateErr.Error()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a plan encoded by MarshalJSON.
func (p *DecisionPlan) UnmarshalJSON(b []byte) error {
	var j decisionPlanJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	bump, err := parseBump(j.Bump)
	if err != nil {
		return err
	}
	*p = DecisionPlan{Run: j.Run, From: j.From, To: j.To, Bump: bump, Keep: j.Keep, Rerun: j.Rerun}
	for _, c := range j.Changes {
		cb, err := parseBump(c.Bump)
		if err != nil {
			return err
		}
		p.Changes = append(p.Changes, graph.Change{Path: c.Path, What: c.What, Bump: cb})
	}
	if j.NewError != "" {
		p.NewErr = errors.New(j.NewError)
	}
	if j.MigrateError != "" {
		p.MigrateErr = errors.New(j.MigrateError)
	}
	return nil
}

func parseBump(s string) (graph.Bump, error) {
	for b := graph.BumpNone; b <= graph.BumpMajor; b++ {
		if b.String() == s {
			return b, nil
		}
	}
	return 0, fmt.Errorf("bump %q is not none, PATCH, MINOR or MAJOR", s)
}
