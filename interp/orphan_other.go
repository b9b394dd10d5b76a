//go:build !linux

package interp

import (
	"os"
	"syscall"
)

// startLocked runs start and wait of an exec action. Outside Linux there is
// no parent-death signal: a killed flowrun leaves its action running.
func startLocked(_ *syscall.SysProcAttr, run func() error) error { return run() }

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
