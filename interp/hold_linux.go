//go:build linux

package interp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// holdDenied is set when this process may not trace its children (a
// seccomp policy, Yama's ptrace_scope 2 or 3, an LSM, flowrun itself
// traced by strace -f; see holdRefused): from then on every exec action
// starts after its commit.
var holdDenied atomic.Bool

// holdable reports whether the program of cmd may be created held (see
// startHeld): not when holding is denied, and not for a program that
// could gain privileges (see mayGainPrivileges), which Linux would run
// without them under ptrace. A program that cannot be examined is not
// held either; its normal start says what is wrong with it.
func holdable(cmd *exec.Cmd) bool {
	if holdDenied.Load() || cmd.Err != nil {
		return false
	}
	path := cmd.Path
	if !filepath.IsAbs(path) && cmd.Dir != "" {
		path = filepath.Join(cmd.Dir, path)
	}
	return !mayGainPrivileges(path, cmd.Dir, 0)
}

// maxInterpreters is how many "#!" interpreters deep a script is
// followed, as deep as Linux runs one (exec_binprm's limit): a deeper
// chain is not held, which is safe whatever the kernel's limit is.
const maxInterpreters = 5

// mayGainPrivileges reports whether executing path may raise privileges,
// or cannot be told: a setuid or setgid bit or file capabilities
// (security.capability) on the file, or on the interpreter its "#!" line
// names, which Linux honours for a script, followed as deep as the
// kernel does. A relative interpreter is found from dir, the program's
// working directory, as the kernel does.
func mayGainPrivileges(path, dir string, depth int) bool {
	if depth > maxInterpreters {
		return true
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		return true
	}
	if _, err := unix.Getxattr(path, "security.capability", nil); !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
		return true
	}
	interp, script, err := interpreter(path)
	switch {
	case err != nil:
		return true
	case !script:
		return false
	}
	if !filepath.IsAbs(interp) && dir != "" {
		interp = filepath.Join(dir, interp)
	}
	return mayGainPrivileges(interp, dir, depth+1)
}

// interpreter returns the interpreter that the "#!" line of the file at
// path names, read as the kernel reads it (binfmt_script): within the
// first 256 bytes, after optional blanks, up to a blank, a NUL or the
// end of the line. script is false for a file without a "#!" line (a binary).
// A "#!" line without a name, or whose name does not end within those
// bytes, is an error: the kernel does not run such a script either.
func interpreter(path string) (name string, script bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var buf [256]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", false, err
	}
	line, ok := bytes.CutPrefix(buf[:n], []byte("#!"))
	if !ok {
		return "", false, nil
	}
	line = bytes.TrimLeft(line, " \t")
	end := bytes.IndexAny(line, " \t\n\x00")
	if end < 0 && n < len(buf) {
		end = len(line)
	}
	if end <= 0 {
		return "", true, fmt.Errorf("%s: the #! line names no interpreter within its first %d bytes", path, len(buf))
	}
	return string(line[:end]), true, nil
}

// startHeld starts cmd with the program held before its first instruction:
// the child asks to be traced (PTRACE_TRACEME) and so stops at the end of
// its execve. The fork and the loading of the program then overlap the
// commit of the attempt's start; release lets it run (PTRACE_DETACH) once
// that commit is durable. The caller's goroutine must be locked to its OS
// thread (startLocked) until release: the thread that forked is the
// tracer. It returns false, with nothing started, when the program could
// not be started held; the caller then starts it normally (and calls
// holdRefused if that works).
func startHeld(cmd *exec.Cmd) bool {
	cmd.SysProcAttr.Ptrace = true
	err := cmd.Start()
	cmd.SysProcAttr.Ptrace = false
	return err == nil
}

// holdRefused records that a program which could not be started held
// started normally: the system refuses this process the trace (EPERM
// from seccomp or Yama, EACCES from an LSM such as SELinux, a tracer that
// already follows flowrun's children), so no program is held from now on.
func holdRefused() { holdDenied.Store(true) }

// cldTrapped is the si_code of a traced child's stop (CLD_TRAPPED).
const cldTrapped = 4

// release lets a held program run: it waits for the stop at the end of its
// execve, then stops tracing it, which resumes it without a signal. A
// program that ended before that stop (it was killed) is left for its
// wait to report.
func release(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case info.Code != cldTrapped:
			return nil
		}
		return syscall.PtraceDetach(pid)
	}
}
