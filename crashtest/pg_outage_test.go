package crashtest

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPostgresOutage: a worker lives through a Postgres crash (pg_ctl stop
// -m immediate) while its runs are in flight. The steps that end during
// the outage cannot commit; once the server is back (it recovers from its
// WAL), the worker takes its own runs back at once, without waiting out
// its 30 s lease, and finishes them; it logged one WARN for the outage and
// an INFO when the store answered again; a drain then exits 0 (the
// outage it recovered from is not its outcome).
//
// It needs a Postgres server of its own to crash: it starts one with
// scripts/pg (durable settings, its own directory and port).
func TestPostgresOutage(t *testing.T) {
	needPostgres(t) // a durable server is available, so scripts/pg works here
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pgDir, err := os.MkdirTemp("", "flowrun-pg-outage-")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(pgDir) // scripts/pg makes it, owned by the server's user
	pg := func(verb string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", "pg"), verb, "--durable")
		cmd.Env = append(os.Environ(), "FLOWRUN_PG_DIR="+pgDir, fmt.Sprintf("FLOWRUN_PG_PORT=%d", outagePort()))
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("scripts/pg %s: %v\n%s", verb, err, stderr)
		}
		return strings.TrimSpace(string(out))
	}
	line := pg("start")
	t.Cleanup(func() { pg("stop") })
	base := strings.TrimPrefix(line, "export "+durableEnv+"=")
	dsn, rdb := pgSchema(t, base, "outage")

	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	wf := filepath.Join(dir, "outage.hcl")
	write(t, wf, fmt.Sprintf(outageWorkflow, dir, gate))
	const n = 3
	for i := range n {
		if r := flowrun(t, nil, "--db", dsn, "apply", wf, "--detach", "--input", fmt.Sprintf("n=%d", i)); r.code != 0 {
			t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
		}
	}
	w := start(t, "worker", []string{"FLOWRUN_HOST=outage-host"}, "--db", dsn, "worker", "--lease", "30s")
	t.Cleanup(func() { w.kill() })
	deadline := wall.Now().Add(time.Minute)
	for started(dir) < n {
		if wall.Now().After(deadline) || w.exited() {
			t.Fatalf("%d of %d runs' gates started; worker stderr:\n%s", started(dir), n, w.stderr())
		}
		sleep(10 * time.Millisecond)
	}

	// The server crashes with every run's gate step in flight; the gates
	// open during the outage, so each step's end finds the store down.
	pg("crash")
	write(t, gate, "")
	sleep(3 * time.Second)
	pg("revive")
	back := wall.Now()

	for completed(t, rdb) < n {
		if wall.Now().After(back.Add(20 * time.Second)) {
			t.Fatalf("%d of %d runs completed 20s after the server came back (its lease is 30s: the worker waited it out); worker stderr:\n%s",
				completed(t, rdb), n, w.stderr())
		}
		if w.exited() {
			t.Fatalf("the worker exited during the outage; stderr:\n%s", w.stderr())
		}
		sleep(20 * time.Millisecond)
	}
	if took := wall.Now().Sub(back); took > 5*time.Second {
		t.Errorf("the runs completed %s after the server came back, want within 5s", took)
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-w.done
	log := w.stderr()
	if code := w.exitCode(); code != 0 {
		t.Fatalf("the drained worker exited %d, want 0 (it recovered from the outage); stderr:\n%s", code, log)
	}
	if c := strings.Count(log, "the store is failing"); c != 1 {
		t.Errorf("the worker logged the outage %d times, want once; stderr:\n%s", c, log)
	}
	if !strings.Contains(log, "level=WARN msg=\"the store is failing") {
		t.Errorf("the outage is not a WARN line; stderr:\n%s", log)
	}
	if !strings.Contains(log, "level=INFO msg=\"the store answers again after failing for") {
		t.Errorf("no INFO line when the store answered again; stderr:\n%s", log)
	}
}

// outagePort is the port of the server the test crashes. The port must be
// free again when the server comes back on it, so it lies below the
// kernel's ephemeral range, where no outgoing connection's local end can
// take it while the server is down (CI once failed that way), and it is
// one of its own per process, so two suites at once cannot take each
// other's port either.
func outagePort() int {
	low := 32768 // Linux's default start of the ephemeral range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	if low < 2048 {
		low = 2048 // an odd range; the revive then retries a taken port
	}
	return low - 1000 + os.Getpid()%700
}

// outageWorkflow's gate step marks that it started, then waits for the
// gate file; the step after it proves the run went on.
const outageWorkflow = `workflow "outage" {
  version = "1.0.0"
  input "n" { type = number }
  key = "string(input.n)"
  step "gate" {
    exec {
      command = ["sh", "-c", "touch %[1]s/started-$1; while [ ! -e %[2]s ]; do sleep 0.02; done", "gate", "{{ input.n }}"]
    }
  }
  step "after" {
    depends_on = [step.gate]
    set { done = true }
  }
}
`

// started counts the runs whose gate step began.
func started(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "started-*"))
	return len(m)
}

// completed counts the completed runs.
func completed(t *testing.T, db *sql.DB) int {
	t.Helper()
	var k int
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE status = 'completed'`).Scan(&k); err != nil {
		return -1 // the server may still be recovering
	}
	return k
}
