//go:build !linux

package interp

import (
	"os"
	"syscall"
)

// startLocked runs start and wait of an exec action. Outside Linux there is
// no parent-death signal: a killed flowrun leaves its action running.
func startLocked(_ *syscall.SysProcAttr, run func() error) error { return run() }

// pipeCloexec makes a pipe whose ends close on exec, under the fork lock
// so that no program started meanwhile inherits them.
func pipeCloexec(fds *[2]int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := syscall.Pipe(fds[:]); err != nil {
		return err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return nil
}

// waitExit returns at once outside Linux: the group of an exec action is
// signaled until os/exec reaps its leader.
func waitExit(int) {}

// killOrphans finds the leftovers of a dead process's exec attempt through
// /proc on Linux; elsewhere it does nothing and returns 0 (the idempotency
// key is what keeps a re-execution safe there).
func killOrphans(string, string, int, string) int { return 0 }

// ownerGone reports whether a lease owner ("host/pid/worker") was a process
// of this host that no longer exists.
func ownerGone(owner, host string) bool {
	h, pid, ok := parseOwner(owner)
	return ok && h == host && pid > 0 && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH
}
