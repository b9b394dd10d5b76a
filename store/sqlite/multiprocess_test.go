package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

const helperEnv = "FLOWRUN_SQLITE_CLAIMER_DB"

// TestMultiProcessClaims runs several worker processes on one file: each
// run is claimed by exactly one of them and completed exactly once.
func TestMultiProcessClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	const runs, procs = 200, 3
	path := filepath.Join(t.TempDir(), "flowrun.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range runs {
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: fmt.Sprintf("r%03d", i), Workflow: "wf", Version: "1.0.0",
			GraphHash: "h", Now: time.Unix(1000, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Every worker opens the store, says "ready" and waits for a line on
	// stdin, so that they all claim at the same time.
	var cmds []*exec.Cmd
	var outs []*bufio.Reader
	var gos []io.WriteCloser
	for i := range procs {
		cmd := exec.Command(exe, "-test.run=^TestHelperClaimer$")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("worker %d did not get ready: %q %v", i, line, err)
		}
		cmds, outs, gos = append(cmds, cmd), append(outs, out), append(gos, stdin)
	}
	for _, g := range gos {
		fmt.Fprintln(g, "go")
		g.Close()
	}
	claimedBy := map[string]int{}
	for i, cmd := range cmds {
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			id, ok := strings.CutPrefix(sc.Text(), "claimed ")
			if !ok {
				continue
			}
			if prev, dup := claimedBy[id]; dup {
				t.Errorf("run %s claimed by workers %d and %d", id, prev, i)
			}
			claimedBy[id] = i
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	perWorker := make([]int, procs)
	for _, w := range claimedBy {
		perWorker[w]++
	}
	t.Logf("runs claimed per worker: %v", perWorker)
	if len(claimedBy) != runs {
		t.Errorf("%d runs claimed, want %d", len(claimedBy), runs)
	}
	for i := range runs {
		id := fmt.Sprintf("r%03d", i)
		r, err := s.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.RunCompleted || r.Lease.Epoch != 1 {
			t.Errorf("run %s: status %s epoch %d, want completed after one claim", id, r.Status, r.Lease.Epoch)
		}
		evs, err := s.EventList(ctx, store.EventListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != "completed" {
			t.Errorf("run %s events %v, want one completed", id, evs)
		}
	}
}

// TestHelperClaimer is a worker process of TestMultiProcessClaims; it does
// nothing in a normal test run.
func TestHelperClaimer(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("runs only as a worker process of TestMultiProcessClaims")
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	owner := "host/" + strconv.Itoa(os.Getpid()) + "/w"
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(2000, 0)
	done := store.RunCompleted
	for {
		rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: owner, Now: now, LeaseFor: time.Hour, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			return
		}
		var ts []store.Transition
		for _, r := range rs {
			fmt.Printf("claimed %s\n", r.ID)
			ts = append(ts, store.Transition{RunID: r.ID, Lease: r.Lease, Now: now,
				Run:    &store.RunUpdate{Status: &done, FinishedAt: &now, Release: true},
				Steps:  []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepCompleted}},
				Events: []store.EventWrite{{Kind: "completed"}}})
		}
		res, err := s.TransitionCommit(ctx, ts)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("transition of %s: %v", r.RunID, r.Err)
			}
		}
	}
}
