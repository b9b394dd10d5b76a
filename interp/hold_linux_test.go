//go:build linux

package interp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flowrun/flowrun/clock"
)

// markedCall is an exec of sh that creates marker, with an environment
// variable by which findMarked finds its process.
func markedCall(t *testing.T) (c *execCall, marker, tag string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "ran")
	tag = "FLOWRUN_TEST_HOLD=" + strconv.Itoa(os.Getpid()) + "-" + t.Name()
	return &execCall{argv: []string{"sh", "-c", "echo ran > " + marker}, env: []string{tag}}, marker, tag
}

// findMarked returns the pid and state (the third field of /proc/PID/stat)
// of the process whose environment holds tag, or 0.
func findMarked(tag string) (int, string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !strings.Contains(string(env), tag+"\x00") {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ...: comm may hold spaces, so cut at its end.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		if f := strings.Fields(rest); len(f) > 0 {
			return pid, f[0]
		}
	}
	return 0, ""
}

type execResult struct {
	out any
	err *stepError
}

func runGated(c *execCall, gate chan bool) <-chan execResult {
	done := make(chan execResult, 1)
	go func() {
		out, se := runExec(context.Background(), clock.Real{}, c, 1<<20, gate, func() {}, nil)
		done <- execResult{out, se}
	}()
	return done
}

// TestExecHeldUntilCommitted: an exec launched while its start commits
// has its process created and held in a tracing stop, before its first
// instruction, until the gate says the commit succeeded; then it runs.
func TestExecHeldUntilCommitted(t *testing.T) {
	c, marker, tag := markedCall(t)
	gate := make(chan bool, 1)
	done := runGated(c, gate)
	var pid int
	var state string
	for range 2000 { // the fork is quick; this bounds a broken hold
		if pid, state = findMarked(tag); pid != 0 && state == "t" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if pid == 0 || state != "t" {
		gate <- false
		<-done
		if holdDenied.Load() {
			t.Skip("this machine does not let a process trace its children (ptrace_scope, seccomp): programs start after their commit")
		}
		t.Fatalf("no held process found (pid %d, state %q), want one in tracing stop (t)", pid, state)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the held program ran before the gate opened")
	}
	gate <- true
	res := <-done
	if res.err != nil {
		t.Fatalf("exec: %v", res.err)
	}
	if raw, err := os.ReadFile(marker); err != nil || string(raw) != "ran\n" {
		t.Fatalf("marker %q (%v), want the program to have run once", raw, err)
	}
	if out := res.out.(map[string]any); out["exit_code"] != float64(0) {
		t.Fatalf("output %v, want exit code 0", out)
	}
}

// TestExecNotCommittedNeverRuns: when the commit fails the held program is
// killed and reaped without running, both held and, where holding is
// denied, when it would only be created after the gate.
func TestExecNotCommittedNeverRuns(t *testing.T) {
	for _, denied := range []bool{false, true} {
		t.Run("denied="+strconv.FormatBool(denied), func(t *testing.T) {
			holdDenied.Store(denied)
			t.Cleanup(func() { holdDenied.Store(false) })
			c, marker, tag := markedCall(t)
			gate := make(chan bool, 1)
			done := runGated(c, gate)
			gate <- false
			res := <-done
			if res.err == nil || !strings.Contains(res.err.Message, errNotCommitted.Error()) {
				t.Fatalf("exec: %v, want %q", res.err, errNotCommitted)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the program ran although its start never committed")
			}
			if pid, state := findMarked(tag); pid != 0 {
				t.Fatalf("process %d (state %s) is left over", pid, state)
			}
			// The same call with the gate open runs, held or not.
			done = runGated(c, gate)
			gate <- true
			if res := <-done; res.err != nil {
				t.Fatalf("exec: %v", res.err)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the program did not run with its start committed: %v", err)
			}
		})
	}
}

// TestExecHeldStartFailsThenStartsNormally: a program that cannot be
// started held (here: not executable) is started the normal way after the
// gate, which reports the real error, and holding stays allowed.
func TestExecHeldStartFailsThenStartsNormally(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "noexec")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gate := make(chan bool, 1)
	gate <- true
	res := <-runGated(&execCall{argv: []string{prog}}, gate)
	if res.err == nil || !strings.Contains(res.err.Message, "permission denied") {
		t.Fatalf("exec: %v, want permission denied", res.err)
	}
	if holdDenied.Load() {
		t.Fatal("a program's own start error turned holding off")
	}
}

// TestHoldable: programs with a setuid or setgid bit, which Linux would
// run without their privilege while traced, are never held; nor is what
// cannot be examined.
func TestHoldable(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := mk("plain", 0o755)
	caps := mk("caps", 0o755)
	// cap_net_raw in the permitted set (struct vfs_cap_data, revision 2);
	// setting it needs CAP_SETFCAP, so the case runs as root only.
	capData := []byte{0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	hasCaps := unix.Setxattr(caps, "security.capability", capData, 0) == nil
	if !hasCaps {
		t.Log("cannot give a file capabilities here (not root?): that case expects it held")
	}
	suid := mk("suid", 0o755|os.ModeSetuid)
	script := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	binary, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	// deep[i] is a script i interpreters away from /bin/sh.
	deep := []string{"/bin/sh", plain}
	for i := 2; i <= maxInterpreters+1; i++ {
		deep = append(deep, script(fmt.Sprintf("deep%d", i), "#!"+deep[i-1]+"\n"))
	}
	for _, tc := range []struct {
		name string
		path string
		dir  string
		want bool
	}{
		{"plain", plain, "", true},
		{"a binary", binary, "", true},
		{"relative to the command's dir", "./plain", dir, true},
		{"setuid", suid, "", false},
		{"setgid", mk("sgid", 0o755|os.ModeSetgid), "", false},
		{"missing", filepath.Join(dir, "missing"), "", false},
		{"a directory", dir, "", false},
		{"file capabilities", caps, "", !hasCaps},
		{"script of a plain interpreter, blanks and an argument", script("blanks", "#! \t"+plain+" -e\necho\n"), "", true},
		{"script of a script", script("nested", "#!"+plain+"\n"), "", true},
		{"script of a setuid interpreter", script("of-suid", "#!"+suid+"\n"), "", false},
		{"script of a setuid interpreter, NUL after the name", script("of-suid-nul", "#!"+suid+"\x00\n"), "", false},
		{"script of a script of a setuid interpreter", script("of-of-suid", "#!"+filepath.Join(dir, "of-suid")+" -x\n"), "", false},
		{"script of a relative setuid interpreter", script("of-rel-suid", "#!./suid\n"), dir, false},
		{"script of an interpreter with file capabilities", script("of-caps", "#!"+caps+"\n"), "", !hasCaps},
		{"script of a missing interpreter", script("of-missing", "#!"+filepath.Join(dir, "missing")+"\n"), "", false},
		{"script without an interpreter", script("of-nothing", "#!\n"), "", false},
		{"script whose interpreter does not end in 256 bytes", script("of-long", "#!/"+strings.Repeat("x", 300)), "", false},
		{"scripts as deep as the kernel runs them", deep[maxInterpreters], "", true},
		{"scripts deeper than that", deep[maxInterpreters+1], "", false},
	} {
		c := &execCall{argv: []string{tc.path}, dir: tc.dir}
		if got := holdable(c.command(clock.Real{}, &syscall.SysProcAttr{})); got != tc.want {
			t.Errorf("%s: holdable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestExecTimeoutStartsWhenReleased: an attempt's timeout counts from its
// program's start, not from its launch: a commit of its start that takes
// longer than the timeout (a busy database) does not time the attempt out.
func TestExecTimeoutStartsWhenReleased(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, marker, tag := markedCall(t)
	f := &flight{launch: &launch{exec: c, timeout: time.Second, limit: 1 << 20}, gate: make(chan bool, 1)}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	defer f.cancel()
	done := make(chan flightResult, 1)
	go func() { done <- f.do(&Engine{clk: clk}) }()
	for range 2000 { // wait until the program is held
		if pid, state := findMarked(tag); pid != 0 && state == "t" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	clk.Advance(2 * time.Second) // the commit of the start takes 2 s
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers pending while the program is held, want none", n)
	}
	f.gate <- true
	res := <-done
	if res.err != nil {
		t.Fatalf("attempt: %v, want it to run with its whole timeout ahead", res.err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the program did not run: %v", err)
	}
}

// TestExecTimeoutSetBeforeProgramRuns: an attempt's timeout is set before
// its program can do anything (started, released from its hold, or
// started after the gate where holding is denied), not just after: a test
// that moves a fake clock once the program has shown it runs (it touched
// a file) found the timeout not set yet on a loaded machine, and the
// attempt then never timed out (TestExecStopIsTermThenKill, seen under
// load). running here waits a moment, then looks for the program's mark.
func TestExecTimeoutSetBeforeProgramRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gated  bool
		denied bool
	}{{"no gate", false, false}, {"held", true, false}, {"hold denied", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			holdDenied.Store(tc.denied)
			t.Cleanup(func() { holdDenied.Store(false) })
			c, marker, _ := markedCall(t)
			var gate chan bool
			if tc.gated {
				gate = make(chan bool, 1)
				gate <- true
			}
			ranFirst := false
			running := func() {
				time.Sleep(100 * time.Millisecond) // time for a started program to write its mark
				_, err := os.Stat(marker)
				ranFirst = err == nil
			}
			if _, se := runExec(context.Background(), clock.Real{}, c, 1<<20, gate, running, nil); se != nil {
				t.Fatalf("exec: %v", se)
			}
			if ranFirst {
				t.Fatal("the program ran before its timeout was set")
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the program did not run: %v", err)
			}
		})
	}
}
