package crashtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// feKilledWorkflow is a foreach of exec items whose output nothing reads:
// the step's row is written with store.ItemOutputs and the store
// assembles its output from the items' rows when it is read.
const feKilledWorkflow = `workflow "fe" {
  version = "1.0.0"
  input "items" { type = list(number) }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 3
    }
    exec { command = ["sh", "-c", "sleep 0.05; echo {{ item * 3 }}"] }
  }
}
`

// TestPostgresForeachKilled: a worker running a foreach on Postgres is
// SIGKILLed once part of the items completed; another worker takes the
// run over when the lease expires and completes it. show --json then
// lists every item's output in index order, as an uninterrupted run's,
// from the store (the step's row holds no list of its own).
func TestPostgresForeachKilled(t *testing.T) {
	base := needPostgres(t)
	dsn, rdb := pgSchema(t, base, "foreach")
	wf := filepath.Join(t.TempDir(), "fe.hcl")
	if err := os.WriteFile(wf, []byte(feKilledWorkflow), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 40
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	if r := flowrun(t, nil, "--db", dsn, "apply", wf, "--detach", "--input", "items=["+strings.Join(items, ",")+"]"); r.code != 0 {
		t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
	}
	var id string
	if err := rdb.QueryRow(`SELECT id FROM runs`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	itemsDone := func() int {
		var k int
		if err := rdb.QueryRow(`SELECT count(*) FROM steps WHERE step = 'each' AND idx >= 0 AND status = 'completed'`).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	w1 := start(t, "worker 1", []string{"FLOWRUN_HOST=host-1"}, "--db", dsn, "worker", "--lease", "2s")
	deadline := wall.Now().Add(time.Minute)
	for itemsDone() < 8 {
		if wall.Now().After(deadline) || w1.exited() {
			t.Fatalf("the items did not begin to complete (%d); worker 1 stderr:\n%s", itemsDone(), w1.stderr())
		}
		sleep(10 * time.Millisecond)
	}
	if killed, _ := w1.kill(); !killed {
		t.Fatalf("worker 1 ended before the kill; stderr:\n%s", w1.stderr())
	}
	if k := itemsDone(); k >= n {
		t.Fatalf("all %d items completed before the kill: the test proves nothing", k)
	}
	w2 := start(t, "worker 2", []string{"FLOWRUN_HOST=host-2"}, "--db", dsn, "worker", "--lease", "2s")
	for {
		var status string
		if err := rdb.QueryRow(`SELECT status FROM runs WHERE id = $1`, id).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status == "completed" {
			break
		}
		if status == "failed" || status == "canceled" || wall.Now().After(deadline) || w2.exited() {
			t.Fatalf("the run is %s; worker 2 stderr:\n%s", status, w2.stderr())
		}
		sleep(20 * time.Millisecond)
	}
	var stored string
	if err := rdb.QueryRow(`SELECT output FROM steps WHERE run_id = $1 AND key = 'each'`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != store.ItemOutputsText {
		t.Fatalf("the step's row holds %.80q, want store.ItemOutputs (nothing reads its output)", stored)
	}
	r := flowrun(t, nil, "--db", dsn, "show", "--json", id)
	if r.code != 0 {
		t.Fatalf("show --json exited %d; stderr:\n%s", r.code, r.stderr)
	}
	var view struct {
		Steps map[string]struct {
			Status string
			Output []struct {
				Stdout   string `json:"stdout"`
				ExitCode int    `json:"exit_code"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &view); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.stdout)
	}
	each := view.Steps["each"]
	if each.Status != "completed" || len(each.Output) != n {
		t.Fatalf("step each is %s with %d outputs, want completed with %d", each.Status, len(each.Output), n)
	}
	for i, o := range each.Output {
		if want := fmt.Sprintf("%d\n", 3*i); o.Stdout != want || o.ExitCode != 0 {
			t.Fatalf("output[%d] = %+v, want stdout %q", i, o, want)
		}
	}
}
