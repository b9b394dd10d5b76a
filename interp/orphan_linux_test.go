//go:build linux

package interp

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestKillOrphans: the leftovers of an attempt (a shell in its own process
// group and the command it started) are found by their FLOWRUN_*
// variables and killed with their group; a process of another attempt is
// left alone.
func TestKillOrphans(t *testing.T) {
	start := func(attempt string) (*exec.Cmd, int) {
		cmd := exec.Command("/bin/sh", "-c", "sleep 60 & echo $!; wait")
		cmd.Env = append(os.Environ(), "FLOWRUN_RUN_ID=run1", "FLOWRUN_STEP=each[2]", "FLOWRUN_ATTEMPT="+attempt, "FLOWRUN_OWNER=host/42/w")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatalf("read the grandchild's pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatalf("grandchild pid %q: %v", line, err)
		}
		return cmd, pid
	}
	old, oldKid := start("1")
	other, otherKid := start("2")

	// The sleep may be caught while it execs (its environ unreadable for an
	// instant); the kill of the shell's process group reaches it anyway.
	if n := killOrphans("run1", "each[2]", 1, "host/42/w"); n < 1 {
		t.Fatalf("killOrphans found %d processes of attempt 1, want the shell and its sleep", n)
	}
	if err := old.Wait(); err == nil {
		t.Fatal("the shell of attempt 1 exited normally; want it killed")
	}
	for deadline := time.Now().Add(5 * time.Second); alive(oldKid); { // safety net only
		if time.Now().After(deadline) {
			t.Fatalf("the sleep (pid %d) started by attempt 1 still runs", oldKid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !alive(other.Process.Pid) || !alive(otherKid) {
		t.Fatal("killOrphans killed the processes of attempt 2")
	}
	if n := killOrphans("run1", "each[2]", 2, "elsewhere/42/w"); n != 0 {
		t.Fatalf("killOrphans found %d processes of another owner's attempt", n)
	}
	if n := killOrphans("run1", "each[2]", 7, "host/42/w"); n != 0 {
		t.Fatalf("killOrphans found %d processes of an attempt that never ran", n)
	}
}
