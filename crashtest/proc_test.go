package crashtest

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// wall is the real clock: kill instants are compared with the times the
// flowrun processes record, which come from the same clock.
var wall clock.Real

// proc is a flowrun process the test started and will kill or stop. Its
// stderr is split into lines as it arrives, so the test can act on the
// progress the process reports.
type proc struct {
	name string
	cmd  *exec.Cmd
	// lines receives each stderr line (dropped when nobody reads fast
	// enough; all of stderr is kept in errOut anyway).
	lines  chan string
	errOut *lineWriter
	stdout bytes.Buffer
	done   chan struct{} // closed when the process has ended and been reaped
	err    error         // cmd.Wait's error, set before done is closed
}

// start starts flowrun with args and the extra environment env. The
// process is reaped by a goroutine the proc owns; wait, kill and stop wait
// for it, and a cleanup kills and reaps whatever is still alive at the end
// of the test.
func start(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, lines: make(chan string, 1024), done: make(chan struct{})}
	p.errOut = &lineWriter{lines: p.lines}
	p.cmd = exec.Command(flowrunBin, args...)
	p.cmd.Env = append(baseEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s (flowrun %q): %v", name, args, err)
	}
	go func() {
		// Reaping at once matters: the engine reclaims the lease of a dead
		// process by testing its pid, and a zombie's pid still exists.
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL unless the process has already ended, waits until it
// is reaped, and reports whether the signal was what ended it, and when.
func (p *proc) kill() (killed bool, k killing) {
	select {
	case <-p.done:
		return false, killing{}
	default:
	}
	k.sent = wall.Now()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	k.reaped = wall.Now()
	return p.signaled(syscall.SIGKILL), k
}

// signaled reports whether sig ended the process.
func (p *proc) signaled(sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// exitCode is the exit code of an ended process: -1 when a signal ended it.
func (p *proc) exitCode() int {
	if p.err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stderr is everything the process wrote to stderr so far.
func (p *proc) stderr() string { return p.errOut.String() }

// lineWriter is a process's stderr: it keeps everything and sends each
// complete line to a channel without ever blocking the process.
type lineWriter struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial string
	lines   chan string
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(b)
	text := w.partial + string(b)
	parts := strings.Split(text, "\n")
	w.partial = parts[len(parts)-1]
	for _, line := range parts[:len(parts)-1] {
		select {
		case w.lines <- line:
		default:
		}
	}
	return len(b), nil
}

// String returns all that was written.
func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// waitLine waits for a stderr line of the process for which match
// returns true, and reports false if the process ended first.
func waitLine(t *testing.T, p *proc, match func(line string) bool) bool {
	t.Helper()
	safety := time.After(time.Minute)
	for {
		select {
		case line := <-p.lines:
			if match(line) {
				return true
			}
		case <-p.done:
			return false
		case <-safety:
			t.Fatalf("%s printed nothing the test waited for in a minute; stderr:\n%s", p.name, p.stderr())
		}
	}
}

// rest returns the stderr lines of an ended process that nobody read.
func (p *proc) rest() []string {
	<-p.done
	var out []string
	for {
		select {
		case line := <-p.lines:
			out = append(out, line)
		default:
			return out
		}
	}
}

// sleep waits d on the real clock: the proofs kill processes at real
// instants.
func sleep(d time.Duration) {
	tm := wall.NewTimer(d)
	defer tm.Stop()
	<-tm.C()
}
