package testrun

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// maxCrashFailures is how many failing commit points a test reports
// before it stops replaying.
const maxCrashFailures = 3

// crash runs the test again once per commit point of the uninterrupted
// execution base: the engine is dropped right after commit n and a new
// one resumes the run from the store. Each replay must end with base's
// status and outputs, and run no mocked side effect more often than the
// store recorded attempts of it. It returns the replays run and the
// failures, each naming its commit point.
func (s *session) crash(ctx context.Context, base *execution) (int, []Failure) {
	var fails []Failure
	replays := 0
	for n := 1; n <= len(base.commits); n++ {
		x, err := s.execute(ctx, n)
		replays++
		point := fmt.Sprintf("crash after commit %d of %d", n, len(base.commits))
		if err != nil {
			fails = append(fails, Failure{Pos: pos(s.t.Range), What: "crash", Message: fmt.Sprintf("%s: %v", point, err)})
		} else {
			if n <= len(x.commits) {
				point += " (" + x.commits[n-1] + ")"
			}
			var f []Failure
			if x.run.Status != base.run.Status {
				f = append(f, Failure{Pos: pos(s.t.Range), What: "crash status", Expected: string(base.run.Status), Actual: string(x.run.Status) + errText(x.run.Error), Message: point})
			}
			if !sameJSON(x.run.Outputs, base.run.Outputs) {
				f = append(f, Failure{Pos: pos(s.t.Range), What: "crash outputs", Expected: string(base.run.Outputs), Actual: string(x.run.Outputs), Message: point})
			}
			for _, p := range x.problems {
				// The uninterrupted run had none of these (it passed):
				// the crash caused them.
				if p.What != "crash" {
					p.What = "crash " + p.What
				}
				p.Message = point + ": " + p.Message
				f = append(f, p)
			}
			fails = append(fails, f...)
		}
		if len(fails) >= maxCrashFailures {
			break
		}
	}
	return replays, fails
}

func errText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return " " + string(raw)
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) > 0 {
		_ = json.Unmarshal(a, &x)
	}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &y)
	}
	return reflect.DeepEqual(x, y)
}
