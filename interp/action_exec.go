package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/lang"
)

// execCall is an evaluated exec action.
type execCall struct {
	argv   []string // the program and its arguments (no shell)
	shown  string   // command[0] as written, for messages
	script string   // the script for /bin/sh -c when shell
	shell  bool
	dir    string
	env    []string // added to the inherited environment
	stdin  *string
}

// truncMarker ends a captured stream that went over Limits.OutputBytes:
// the first OutputBytes bytes are kept and this line says how many were
// dropped.
const truncMarker = "\n[flowrun: truncated %d bytes]"

// execWaitDelay bounds how long an exec attempt waits for its output pipes
// to close after the process exited or was killed (a grandchild that kept
// them open).
const execWaitDelay = 2 * time.Second

func (r *runner) prepareExec(ctx context.Context, x *lang.ExecAction, a *lang.Activation) (*execCall, *stepError) {
	bad := func(what string, err error) *stepError {
		return &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate exec %s: %v", what, err)}
	}
	c := &execCall{shell: x.Shell}
	cmd, err := r.evalValue(ctx, x.Command, a)
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
		if c.dir, err = r.evalString(ctx, x.Dir, a); err != nil {
			return nil, bad("dir", err)
		}
	}
	// Relative paths are the workflow file's directory's (language.md §8.3).
	if wd := r.run.WorkDir; wd != "" {
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
		env, err := r.evalValue(ctx, x.Env, a)
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
		s, err := r.evalString(ctx, x.Stdin, a)
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

// runExec runs the program in its own process group; when ctx ends (timeout
// or stop), the whole group is killed with SIGKILL. On Linux the program
// is also killed when the flowrun process dies (startLocked), and what is
// left of its group is killed when the run is reclaimed (killOrphans).
func runExec(ctx context.Context, c *execCall, limit int64) (any, *stepError) {
	var cmd *exec.Cmd
	if c.shell {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", c.script)
	} else {
		cmd = exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	}
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	if c.stdin != nil {
		cmd.Stdin = strings.NewReader(*c.stdin)
	}
	stdout, stderr := &capWriter{limit: limit}, &capWriter{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = execWaitDelay
	// The group is killed only through cmd.Cancel, which os/exec calls while
	// it still waits for the program: once the group has no members left its
	// id may be reused by an unrelated process group, so killing it again
	// after Run returns could hit someone else.
	err := startLocked(cmd.SysProcAttr, cmd.Run)
	code := 0
	if ps := cmd.ProcessState; ps != nil {
		code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	out := map[string]any{"exit_code": float64(code), "stdout": stdout.String(), "stderr": stderr.String(), "json": nil}
	if stdout.dropped == 0 {
		var j any
		if b := bytes.TrimSpace(stdout.buf.Bytes()); len(b) > 0 && json.Unmarshal(b, &j) == nil {
			out["json"] = j
		}
	}
	if err == nil {
		return out, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		msg := fmt.Sprintf("command %q exited with status %d", c.name(), code)
		if tail := lastLine(stderr.buf.String()); tail != "" {
			msg += ": " + tail
		}
		return nil, &stepError{Kind: "exec", Message: msg, ExitCode: &code, Output: out}
	}
	if ctx.Err() != nil {
		return nil, &stepError{Kind: "canceled", Message: "the command was killed", ExitCode: &code, Output: out}
	}
	return nil, &stepError{Kind: "exec", Message: fmt.Sprintf("the command could not be started: %v", err)}
}

// lastLine returns the last non-empty line of s, cut to 300 bytes.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n\r\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// capWriter keeps the first limit bytes written and counts the rest.
type capWriter struct {
	buf     bytes.Buffer
	limit   int64
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - int64(w.buf.Len())
	n := int64(len(p))
	if room > 0 {
		take := min(room, n)
		w.buf.Write(p[:take])
		n -= take
	}
	w.dropped += n
	return len(p), nil
}

// String returns the captured text, with the truncation marker when bytes
// were dropped.
func (w *capWriter) String() string {
	s := w.buf.String()
	if w.dropped > 0 {
		s += fmt.Sprintf(truncMarker, w.dropped)
	}
	return s
}
