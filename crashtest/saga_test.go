package crashtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sagaWorkflow reserves and charges, then fails to ship: the two
// compensations run, newest first; each program appends its name to
// marks.log when it finishes.
const sagaWorkflow = `workflow "saga" {
  version = "1.0.0"
  step "reserve" {
    exec { command = ["sh", "-c", "sleep 0.05; echo reserve >> marks.log"] }
    compensate {
      exec { command = ["sh", "-c", "sleep 0.1; echo release >> marks.log"] }
    }
  }
  step "charge" {
    depends_on = [step.reserve]
    exec { command = ["sh", "-c", "sleep 0.05; echo charge >> marks.log"] }
    compensate {
      exec { command = ["sh", "-c", "sleep 0.1; echo refund >> marks.log"] }
    }
  }
  step "ship" {
    depends_on = [step.charge]
    exec { command = ["sh", "-c", "sleep 0.05; exit 5"] }
  }
}
`

// TestSagaKill: flowrun apply runs a saga whose last step fails, and is
// SIGKILLed at random instants, then run again until it ends. A kill never
// changes the outcome: the run fails with the shipment's error, both
// compensations completed, newest first (the refund before the release),
// and no compensation ran more often than the attempts the store recorded
// for it, nor again after it completed.
func TestSagaKill(t *testing.T) {
	needBinary(t)
	kills := int(envInt(t, "FLOWRUN_SAGA_KILLS", 6))
	seed := envInt(t, "FLOWRUN_CRASH_SEED", 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5a9a))
	dir, wf, db := workflowDir(t, "saga", sagaWorkflow)
	// A failed run's key starts a new run on the next apply: apply again
	// only while the run has not ended.
	var res result
	ended := false
	for n := range kills {
		// A resumed apply has less to do: most kills land in the saga.
		killed, code := killApply(t, n+1, db, wf, 60*time.Millisecond+time.Duration(rng.Int64N(int64(200*time.Millisecond))))
		if !killed {
			if code != 1 {
				t.Fatalf("apply %d exited %d, want 1 (the run failed)", n+1, code)
			}
			res = flowrun(t, nil, "--db", db, "show", "saga@last", "--json")
			res.code = 1
			ended = true
			break
		}
		// The kill may land after the run ended, while apply exits: then
		// the next apply would start a new run.
		if r := flowrun(t, nil, "--db", db, "show", "saga@last", "--json"); r.code == 0 && decodeView(t, r.stdout).Status == "failed" {
			res, res.code, ended = r, 1, true
			break
		}
	}
	if !ended {
		res = flowrun(t, nil, "--db", db, "apply", "--no-tui", wf, "--json")
	}
	got := decodeView(t, res.stdout)
	if res.code == 0 || got.Status != "failed" {
		t.Fatalf("the last apply exited %d with the run %s, want it failed; stderr:\n%s", res.code, got.Status, res.stderr)
	}
	checkSaga(t, dir, db, got)
}

// checkSaga checks the run of sagaWorkflow after the kills: failed with
// the shipment's error, both compensations completed newest first, none
// run more often than its recorded attempts, the saga begun once.
func checkSaga(t *testing.T, dir, db string, got *runView) {
	t.Helper()
	var re struct {
		Kind          string `json:"kind"`
		Step          string `json:"step"`
		Compensations []struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"compensations"`
	}
	if err := json.Unmarshal(got.Error, &re); err != nil {
		t.Fatal(err)
	}
	if re.Kind != "exec" || re.Step != "ship" || len(re.Compensations) != 2 ||
		re.Compensations[0] != (struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		}{"charge", "completed"}) || re.Compensations[1].Step != "reserve" || re.Compensations[1].Status != "completed" {
		t.Fatalf("run error %s, want the shipment's exec error with charge then reserve compensated", got.Error)
	}
	rdb := openReadOnly(t, db)
	atts := map[string]int{}
	for _, a := range attempts(t, rdb, got.RunID) {
		atts[a.StepKey]++
	}
	raw, err := os.ReadFile(filepath.Join(dir, "marks.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(raw))
	ran := map[string]int{}
	lastRefund, firstRelease := -1, -1
	for i, l := range lines {
		ran[l]++
		if l == "refund" {
			lastRefund = i
		}
		if l == "release" && firstRelease < 0 {
			firstRelease = i
		}
	}
	for mark, key := range map[string]string{"refund": "charge~compensate", "release": "reserve~compensate"} {
		if ran[mark] < 1 || ran[mark] > atts[key] {
			t.Errorf("%s ran %d times with %d attempts of %s recorded: marks.log %q", mark, ran[mark], atts[key], key, raw)
		}
	}
	if lastRefund < 0 || firstRelease < lastRefund {
		t.Errorf("marks.log %q: the release ran before the refund ended", raw)
	}
	started := 0
	for _, e := range events(t, rdb, got.RunID) {
		if e.Kind == "compensation_started" {
			started++
		}
	}
	if started != 1 {
		t.Errorf("%d compensation_started events, want 1: the saga began twice", started)
	}
}

// TestSagaWorkerKill: the same saga enqueued with apply --detach and run
// by flowrun worker processes, each SIGKILLed at a random instant, then a
// last worker that runs it to its end. The outcome is the uninterrupted
// one (checkSaga).
func TestSagaWorkerKill(t *testing.T) {
	needBinary(t)
	kills := int(envInt(t, "FLOWRUN_SAGA_KILLS", 6))
	seed := envInt(t, "FLOWRUN_CRASH_SEED", 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5a9b))
	dir, wf, db := workflowDir(t, "saga", sagaWorkflow)
	if r := flowrun(t, nil, "--db", db, "apply", wf, "--detach"); r.code != 0 {
		t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
	}
	ended := func() *runView {
		r := flowrun(t, nil, "--db", db, "show", "saga@last", "--json")
		if r.code != 0 {
			t.Fatalf("show exited %d; stderr:\n%s", r.code, r.stderr)
		}
		v := decodeView(t, r.stdout)
		switch v.Status {
		case "completed", "failed", "canceled":
			return v
		}
		return nil
	}
	for n := range kills {
		w := start(t, fmt.Sprintf("worker %d", n+1), nil, "--db", db, "worker")
		d := 100*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
		sleep(d)
		ok, _ := w.kill()
		w.rest()
		if !ok {
			t.Fatalf("worker %d exited (%d) before its kill; stderr:\n%s", n+1, w.exitCode(), w.stderr())
		}
		t.Logf("kill %d at %s", n+1, d.Round(time.Millisecond))
		if v := ended(); v != nil {
			checkSaga(t, dir, db, v)
			return
		}
	}
	w := start(t, "last worker", nil, "--db", db, "worker")
	defer func() { w.kill(); w.rest() }()
	for range 300 {
		if v := ended(); v != nil {
			checkSaga(t, dir, db, v)
			return
		}
		sleep(100 * time.Millisecond)
	}
	t.Fatalf("the run did not end in 30s under the last worker; stderr:\n%s", w.stderr())
}
