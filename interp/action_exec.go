package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"golang.org/x/sys/unix"
)

// execCall is an evaluated exec action.
type execCall struct {
	argv   []string // the program and its arguments (no shell)
	shown  string   // command[0] as written, for messages
	script string   // the script for /bin/sh -c when shell
	shell  bool
	dir    string
	worker []string // the worker's variables the program takes (workerEnv)
	env    []string // the step's env, then flowrun's variables (programEnv)
	stdin  *string
	red    *redactor // the run's secrets, for cutting the streams (capWriter)
	user   *ExecUser // the user it runs as (Options.ExecUser; nil: flowrun's)
}

// truncMarker ends a captured stream that went over Limits.OutputBytes:
// the first OutputBytes bytes are kept and this line says how many were
// dropped.
const truncMarker = "\n[flowrun: truncated %d bytes]"

// execWaitDelay bounds how long an exec attempt waits for its output pipes
// to close after the process exited or was killed (a grandchild that kept
// them open).
const execWaitDelay = 2 * time.Second

func (sc *scheduler) prepareExec(ctx context.Context, x *graph.ExecAction, a *expr.Activation) (*execCall, *stepError) {
	bad := func(what string, err error) *stepError {
		return &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate exec %s: %v", what, err)}
	}
	c := &execCall{shell: x.Shell, red: sc.red, worker: workerEnv(sc.out.environ(), x.PassEnv), user: sc.out.execUser()}
	cmd, err := sc.evalValue(ctx, x.Command, a)
	if err != nil {
		return nil, bad("command", err)
	}
	switch v := cmd.(type) {
	case string:
		if x.Shell {
			c.script = v
		} else {
			c.argv = []string{v}
		}
	case []any:
		for _, e := range v {
			c.argv = append(c.argv, plainString(e))
		}
		if x.Shell {
			c.script = strings.Join(c.argv, " ")
		}
	default:
		return nil, bad("command", fmt.Errorf("command must be a list of strings, got %s", describe(v)))
	}
	if !x.Shell && len(c.argv) == 0 {
		return nil, bad("command", errors.New("command is empty; give the program and its arguments"))
	}
	if x.Dir != nil {
		if c.dir, err = sc.evalString(ctx, x.Dir, a); err != nil {
			return nil, bad("dir", err)
		}
	}
	// Relative paths are the workflow file's directory's (language.md §8.3).
	if wd := sc.run.WorkDir; wd != "" {
		if c.dir == "" {
			c.dir = wd
		} else if !filepath.IsAbs(c.dir) {
			c.dir = filepath.Join(wd, c.dir)
		}
		if len(c.argv) > 0 && strings.Contains(c.argv[0], "/") && !filepath.IsAbs(c.argv[0]) {
			c.shown, c.argv[0] = c.argv[0], filepath.Join(wd, c.argv[0])
		}
	}
	if x.Env != nil {
		env, err := sc.evalValue(ctx, x.Env, a)
		if err != nil {
			return nil, bad("env", err)
		}
		m, _ := env.(map[string]any)
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c.env = append(c.env, k+"="+plainString(m[k]))
		}
	}
	if x.Stdin != nil {
		s, err := sc.evalString(ctx, x.Stdin, a)
		if err != nil {
			return nil, bad("stdin", err)
		}
		c.stdin = &s
	}
	return c, nil
}

// name is the program for messages.
func (c *execCall) name() string {
	if c.shell {
		return "/bin/sh"
	}
	if c.shown != "" {
		return c.shown
	}
	return c.argv[0]
}

// plainString renders a value as a command argument or an environment
// value: strings as they are, anything else as JSON.
func plainString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(mustJSON(v))
}

// execKillGrace is how long a stopped exec's process group has between
// SIGTERM and SIGKILL (semantics.md §3, §7).
const execKillGrace = 5 * time.Second

// command makes the command of one start of the exec, with attr as its
// process attributes.
func (c *execCall) command(clk clock.Clock, attr *syscall.SysProcAttr) *exec.Cmd {
	var cmd *exec.Cmd
	if c.shell {
		cmd = exec.Command("/bin/sh", "-c", c.script)
	} else if p, ok := programs.resolve(clk, c.argv[0]); ok {
		cmd = &exec.Cmd{Path: p, Args: c.argv}
	} else {
		cmd = exec.Command(c.argv[0], c.argv[1:]...) // it says why the program cannot be run
	}
	cmd.Dir = c.dir
	cmd.Env = programEnv(c.worker, c.env)
	if c.stdin != nil {
		cmd.Stdin = strings.NewReader(*c.stdin)
	} else if f := devNull(); f != nil {
		cmd.Stdin = f
	}
	cmd.SysProcAttr = attr
	// WaitDelay bounds os/exec's own stdin writer when a process left
	// behind holds stdin open; the output pipes are bounded by outPipes.
	cmd.WaitDelay = execWaitDelay
	return cmd
}

// runExec runs the program in its own process group. When ctx ends
// (timeout, cancel, stop) the whole group gets SIGTERM and, execKillGrace
// later on clk, SIGKILL; what is left of the group when the program has
// ended is killed then. On Linux the program is also killed when the
// flowrun process dies (startLocked), and what is left of its group is
// killed when the run is reclaimed (killOrphans).
//
// Its stdout and stderr are pipes that one goroutine reads (outPipes), not
// the two copying goroutines os/exec would start, and a program without
// stdin reads a /dev/null opened once: an exec step's own cost beyond the
// spawn is then a handful of system calls.
//
// A non-nil gate says the attempt's start is being committed meanwhile:
// the program runs only if the gate receives true (startGated). running
// is called when the program is about to run, before it is started or
// released (the attempt's timeout starts then): whatever the program
// does, its timeout is already set.
func runExec(ctx context.Context, clk clock.Clock, c *execCall, limit int64, gate <-chan bool, running func(), live *liveOutput) (any, *stepError) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if u := c.user; u != nil {
		attr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}
	}
	newCmd := func() *exec.Cmd { return c.command(clk, attr) }
	cmd := newCmd()
	stdout, stderr := &capWriter{limit: limit, red: c.red}, &capWriter{limit: limit, red: c.red}
	err := startLocked(attr, func() error {
		p, err := newOutPipes()
		if err != nil {
			return err
		}
		cmd.Stdout, cmd.Stderr = p.w[0], p.w[1]
		if cmd, err = startGated(cmd, newCmd, gate, running); err != nil {
			p.closeWriters()
			p.closeReaders()
			return err
		}
		p.closeWriters()
		read := make(chan struct{})
		go func() {
			defer close(read)
			p.read(stdout, stderr, live)
		}()
		g := &group{pgid: cmd.Process.Pid}
		// When ctx ends first, a goroutine (of context.AfterFunc) stops the
		// group; stopping is waited for, so none outlives the attempt.
		stopped := make(chan struct{})
		var stopping sync.WaitGroup
		stopping.Add(1)
		unwatch := context.AfterFunc(ctx, func() {
			defer stopping.Done()
			g.stop(clk, stopped)
		})
		// The group's id stays reserved while its leader is unreaped, so
		// the group is signaled only until the leader is seen to end, and
		// reaped only after that.
		waitExit(g.pgid)
		g.end(ctx.Err() != nil)
		close(stopped)
		if unwatch() {
			stopping.Done() // ctx did not end: the stop never ran
		}
		stopping.Wait()
		err = cmd.Wait()
		p.exited.Store(true)
		<-read
		return err
	})
	code := 0
	if ps := cmd.ProcessState; ps != nil {
		code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	out := map[string]any{"exit_code": float64(code), "stdout": stdout.String(), "stderr": stderr.String(), "json": nil}
	if !stdout.truncated() {
		if j, ok := c.red.outputJSON(stdout.buf.Bytes()); ok {
			out["json"] = j
		}
	}
	if err == nil && ctx.Err() == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, &stepError{Kind: "canceled", Message: "the command was killed", ExitCode: &code, Output: out}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := c.red.text(fmt.Sprintf("command %q exited with status %d", c.name(), code))
		if tail := lastLine(string(stderr.kept()), c.red); tail != "" {
			msg += ": " + tail
		}
		return nil, &stepError{Kind: "exec", Message: msg, ExitCode: &code, Output: out}
	}
	if why := c.dirProblem(err); why != "" {
		return nil, &stepError{Kind: "exec", Message: c.red.text("the command could not be started: " + why)}
	}
	return nil, &stepError{Kind: "exec", Message: c.red.text(fmt.Sprintf("the command could not be started: %v", err))}
}

// dirProblem says what is wrong with the step's directory when a start
// failed because of it: the kernel reports a missing dir as the program's
// "fork/exec /usr/bin/true: no such file or directory", which blames a
// program that is there. "" when the directory is not the cause.
func (c *execCall) dirProblem(err error) string {
	if c.dir == "" || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
		return ""
	}
	fi, serr := os.Stat(c.dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return fmt.Sprintf("the directory it runs in, %s, does not exist", c.dir)
	case serr == nil && !fi.IsDir():
		return fmt.Sprintf("the directory it runs in, %s, is not a directory", c.dir)
	}
	return ""
}

// errNotCommitted is why an exec attempt whose start did not commit never
// ran its program.
var errNotCommitted = errors.New("the start of the attempt was not committed")

// startGated starts the program of an exec attempt. Without a gate the
// attempt's start is already committed. With one, the program is created
// while the start commits and runs only when the gate says the commit
// succeeded (true): held before its first instruction when it can be
// (holdable, startHeld), and otherwise created only after the gate opens.
// A program whose start did not commit never runs. again makes a fresh
// command for the start after a held one could not be made. running is
// called just before the program starts or is released, never after: a
// timeout it sets is set before the program can do anything.
func startGated(cmd *exec.Cmd, again func() *exec.Cmd, gate <-chan bool, running func()) (*exec.Cmd, error) {
	if gate == nil {
		running()
		return cmd, cmd.Start()
	}
	triedHold := holdable(cmd)
	if triedHold {
		if startHeld(cmd) {
			err := errNotCommitted
			if <-gate {
				running()
				if err = release(cmd.Process.Pid); err == nil {
					return cmd, nil
				}
				err = fmt.Errorf("releasing the held program: %w", err)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return cmd, err
		}
		fresh := again()
		fresh.Stdout, fresh.Stderr = cmd.Stdout, cmd.Stderr
		cmd = fresh
	}
	if !<-gate {
		return cmd, errNotCommitted
	}
	running()
	err := cmd.Start()
	if err == nil && triedHold {
		holdRefused() // it starts, only not held
	}
	return cmd, err
}

// group is the process group of a running exec action, signaled as a
// whole until its leader (the program) is seen to end.
type group struct {
	pgid  int
	mu    sync.Mutex
	ended bool
}

// signal sends sig to the group while its leader has not been seen to end.
func (g *group) signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.ended {
		_ = syscall.Kill(-g.pgid, sig)
	}
}

// end records that the leader ended (it is not reaped yet, so its group
// id is still this group's); a stopped action's leftovers get SIGKILL.
func (g *group) end(stopped bool) {
	if stopped {
		_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
	}
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}

// stop stops the group: SIGTERM, then SIGKILL after execKillGrace unless
// done closes first (the leader ended).
func (g *group) stop(clk clock.Clock, done <-chan struct{}) {
	g.signal(syscall.SIGTERM)
	t := clk.NewTimer(execKillGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C():
		g.signal(syscall.SIGKILL)
	}
}

// devNull is /dev/null opened once for reading, the stdin of every exec
// action that gives none (nil when it cannot be opened: os/exec then
// opens it itself).
var devNull = sync.OnceValue(func() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil
	}
	return f
})

// outPipes are the stdout and stderr pipes of one exec attempt: the write
// ends go to the program, the read ends are polled by one goroutine.
type outPipes struct {
	r      [2]int      // read ends (raw descriptors, blocking)
	w      [2]*os.File // write ends, closed in this process once started
	exited atomic.Bool // the program has been waited for
}

func newOutPipes() (*outPipes, error) {
	p := &outPipes{}
	for i := range 2 {
		var fds [2]int
		if err := pipeCloexec(&fds); err != nil {
			for j := range i {
				syscall.Close(p.r[j])
				p.w[j].Close()
			}
			return nil, fmt.Errorf("creating an output pipe: %w", err)
		}
		p.r[i], p.w[i] = fds[0], os.NewFile(uintptr(fds[1]), "|"+strconv.Itoa(i+1))
	}
	return p, nil
}

func (p *outPipes) closeWriters() {
	p.w[0].Close()
	p.w[1].Close()
}

func (p *outPipes) closeReaders() {
	syscall.Close(p.r[0])
	syscall.Close(p.r[1])
}

// outPollMS is how long one poll of the output pipes waits, so that the
// reader notices the program's end even when a process it left behind
// holds the pipes open.
const outPollMS = 100

// read copies the two pipes into out and errw, and into live (the live
// output, which may be nil), until both reach end of file, or until
// execWaitDelay (counted in polls) after the program was waited for: a
// background process it started may hold the pipes open, and the step
// ends with what was read by then. After each poll it lets live commit
// what it holds (liveOutput.tick). It closes the read ends.
func (p *outPipes) read(out, errw *capWriter, live *liveOutput) {
	defer p.closeReaders()
	fds := []unix.PollFd{{Fd: int32(p.r[0]), Events: unix.POLLIN}, {Fd: int32(p.r[1]), Events: unix.POLLIN}}
	dst := [2]*capWriter{out, errw}
	buf := make([]byte, 32<<10)
	open, after := 2, 0
	for open > 0 {
		if p.exited.Load() {
			if after++; after > int(execWaitDelay/time.Millisecond)/outPollMS {
				return
			}
		}
		n, err := unix.Poll(fds, outPollMS)
		if err != nil && err != syscall.EINTR {
			return
		}
		live.tick()
		if n <= 0 {
			continue
		}
		for i := range fds {
			if fds[i].Fd < 0 || fds[i].Revents == 0 {
				continue
			}
			m, err := syscall.Read(int(fds[i].Fd), buf)
			if err == syscall.EINTR || err == syscall.EAGAIN {
				continue
			}
			if m <= 0 {
				fds[i].Fd = -1 // end of file (closed in the deferred call)
				open--
				continue
			}
			dst[i].Write(buf[:m])
			live.write(i, buf[:m])
		}
	}
}

// lastLine returns the last non-empty line of s, redacted and then cut to
// 300 bytes (redacted first, so that the cut cannot keep part of a secret).
func lastLine(s string, red *redactor) string {
	// The whole text is redacted before the line is taken: the last line
	// of a secret of several lines (a key in PEM) is not a form of it.
	s = strings.TrimRight(red.text(s), "\n\r\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// capWriter keeps the first limit bytes written and counts the rest.
//
// The text kept is redacted later, by the runner, and the redactor sees
// only that text: a secret cut in two at the limit would leave its first
// part stored. So with the run's secrets (red) the writer also keeps up to
// red.lookahead() bytes past the limit, enough to see whole any secret
// that starts before the limit, and the cut is moved back to the start of
// a secret that straddles it (kept). The text is not redacted here.
type capWriter struct {
	buf   bytes.Buffer
	limit int64
	red   *redactor // may be nil: no secrets
	total int64     // bytes written
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit + int64(w.red.lookahead()) - int64(w.buf.Len())
	if room > 0 {
		w.buf.Write(p[:min(room, int64(len(p)))])
	}
	w.total += int64(len(p))
	return len(p), nil
}

// truncated reports whether more than limit bytes were written.
func (w *capWriter) truncated() bool { return w.total > w.limit }

// kept returns the bytes kept: everything written when it fits in the
// limit, else the first limit bytes, or fewer when a secret straddles the
// limit (it is dropped whole).
func (w *capWriter) kept() []byte {
	b := w.buf.Bytes()
	if !w.truncated() {
		return b
	}
	return b[:w.red.safeCut(b, int(w.limit))]
}

// String returns the kept text, with the truncation marker saying how many
// bytes were dropped when the stream went over the limit.
func (w *capWriter) String() string {
	k := w.kept()
	s := string(k)
	if w.truncated() {
		s += fmt.Sprintf(truncMarker, w.total-int64(len(k)))
	}
	return s
}

// programCacheFor is how long a program found on PATH is used without
// looking it up again: an exec step then costs one access(2) check of the
// path found instead of a PATH search (one stat per directory, tens of
// microseconds), and a program installed earlier on PATH is seen within a
// second, as a shell's hash table would see it after `hash -r`. A cached
// program that is gone (or no longer executable) is looked up again at
// once.
const programCacheFor = time.Second

// maxCachedPrograms bounds the cache.
const maxCachedPrograms = 256

// programs is the process's cache of programs found on PATH, by name and
// the PATH they were found on.
var programs = &programCache{m: map[string]cachedProgram{}}

type programCache struct {
	mu sync.Mutex
	m  map[string]cachedProgram
}

type cachedProgram struct {
	path  string
	pathv string // PATH when it was found
	at    time.Time
}

// resolve returns the program that name (without a slash) stands for on
// PATH, from the cache or looked up; ok is false for a name with a slash
// and for a name not found (exec.Command then says why).
func (c *programCache) resolve(clk clock.Clock, name string) (path string, ok bool) {
	if strings.ContainsRune(name, '/') {
		return "", false
	}
	pathv, now := os.Getenv("PATH"), clk.Now()
	c.mu.Lock()
	p, hit := c.m[name]
	c.mu.Unlock()
	if hit && p.pathv == pathv && !now.Before(p.at) && now.Sub(p.at) < programCacheFor &&
		unix.Access(p.path, unix.X_OK) == nil {
		return p.path, true
	}
	found, err := exec.LookPath(name)
	if err != nil || !filepath.IsAbs(found) {
		return "", false
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedPrograms {
		clear(c.m) // names made by templates: start over rather than grow
	}
	c.m[name] = cachedProgram{path: found, pathv: pathv, at: now}
	c.mu.Unlock()
	return found, true
}
