package crashtest

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFencedWorkerIsVisible: a worker stopped (SIGSTOP) past its lease
// while its step runs loses the run to another worker; when it goes on
// (SIGCONT) it finds the lease lost at its next heartbeat, logs a WARN
// naming the run, the step it abandoned and who took the run, and counts
// it in flowrun_lease_losses_total. The run completes once, under the
// other worker.
func TestFencedWorkerIsVisible(t *testing.T) {
	needBinary(t)
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "flowrun.db")
	gate := filepath.Join(dir, "go")
	wf := filepath.Join(dir, "fenced.hcl")
	write(t, wf, `workflow "fenced" {
  version = "1.0.0"
  step "gate" {
    exec {
      command = ["sh", "-c", "touch `+dir+`/started-$$; while [ ! -e `+gate+` ]; do sleep 0.02; done"]
    }
  }
}
`)
	if r := flowrun(t, nil, "--db", db, "apply", wf, "--detach"); r.code != 0 {
		t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
	}
	runID := strings.TrimSpace(flowrun(t, nil, "--db", db, "runs", "--json").stdout)
	a := start(t, "worker a", []string{"FLOWRUN_HOST=host-a"}, "--db", db, "worker", "--lease", "1s", "--metrics", "127.0.0.1:0")
	t.Cleanup(func() { a.kill() })
	var addr string
	addrRE := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
	if !waitLine(t, a, func(line string) bool {
		if m := addrRE.FindStringSubmatch(line); m != nil {
			addr = m[1]
			return true
		}
		return false
	}) {
		t.Fatalf("worker a ended before serving metrics; stderr:\n%s", a.stderr())
	}
	deadline := wall.Now().Add(time.Minute)
	for started(dir) < 1 {
		if wall.Now().After(deadline) || a.exited() {
			t.Fatalf("the step did not start under worker a; stderr:\n%s", a.stderr())
		}
		sleep(10 * time.Millisecond)
	}

	// a stops past its lease; b takes the run over and starts the step
	// again.
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b := start(t, "worker b", []string{"FLOWRUN_HOST=host-b"}, "--db", db, "worker", "--lease", "1s")
	t.Cleanup(func() { b.kill() })
	for started(dir) < 2 {
		if wall.Now().After(deadline) || b.exited() {
			t.Fatalf("worker b did not take the run over; stderr:\n%s", b.stderr())
		}
		sleep(10 * time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	lost := regexp.MustCompile(`level=WARN msg="lost the lease of run (\S+) to (host-b/\d+/w\d+); stopped working on it \(abandoned step gate\)"`)
	var m []string
	if !waitLine(t, a, func(line string) bool {
		m = lost.FindStringSubmatch(line)
		return m != nil
	}) {
		t.Fatalf("worker a did not log the lease it lost; stderr:\n%s", a.stderr())
	}
	if !strings.Contains(runID, m[1]) {
		t.Errorf("worker a logged run %s, want the run of %s", m[1], runID)
	}
	if got := metricValue(t, scrape(t, "http://"+addr+"/metrics"), `flowrun_lease_losses_total{workflow="fenced"}`); got != 1 {
		t.Errorf("flowrun_lease_losses_total = %v, want 1", got)
	}

	write(t, gate, "")
	rdb := openReadOnly(t, db)
	for runStatusCounts(t, rdb)["completed"] != 1 {
		if wall.Now().After(deadline) {
			t.Fatalf("the run did not complete under worker b; stderr:\n%s", b.stderr())
		}
		sleep(20 * time.Millisecond)
	}
	for _, w := range []*proc{a, b} {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-w.done
		if code := w.exitCode(); code != 0 {
			t.Errorf("%s exited %d after a drain; stderr:\n%s", w.name, code, w.stderr())
		}
	}
}
