//go:build linux

package interp

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// startLocked runs start (the fork of an exec action) and then wait (its
// whole life) with the calling goroutine locked to its OS thread. The
// child gets SIGKILL when its parent dies (Pdeathsig), and Linux sends that
// signal when the thread that forked it exits: holding the thread for the
// child's lifetime makes that moment the death of the flowrun process, not
// the Go runtime retiring an idle thread.
//
// Before the fork the thread drops the capabilities that reach into
// another process from its bounding set (dropReachCaps), which a child
// inherits: a program started by root, and all it starts, never holds
// them (spec/security.md §9).
func startLocked(attr *syscall.SysProcAttr, run func() error) error {
	attr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dropReachCaps()
	return run()
}

// reachCaps are the capabilities with which a root program could read
// the environment, memory or mappings of the flowrun process although it
// is non-dumpable: CAP_SYS_PTRACE, and CAP_SYS_ADMIN and CAP_PERFMON,
// which Linux accepts in its stead for reading /proc/PID/environ and
// maps; and those that read any memory through the kernel: CAP_BPF,
// CAP_SYS_MODULE, CAP_SYS_RAWIO.
var reachCaps = []uintptr{unix.CAP_SYS_PTRACE, unix.CAP_SYS_ADMIN, unix.CAP_PERFMON, unix.CAP_BPF, unix.CAP_SYS_MODULE, unix.CAP_SYS_RAWIO}

// dropReachCaps removes reachCaps from the calling thread's bounding set.
// The bounding set is a thread's, so every forking thread drops them (the
// thread keeps its own effective capabilities, which flowrun needs to
// find orphans, and none to trace its own children). A drop fails (EPERM)
// only for a thread without CAP_SETPCAP, whose children cannot gain these
// capabilities by running a program anyway, unless file capabilities
// give them to that program.
func dropReachCaps() {
	for _, c := range reachCaps {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
	}
}

// pipeCloexec makes a pipe whose ends close on exec (a program gets only
// the ends it is given).
func pipeCloexec(fds *[2]int) error { return syscall.Pipe2(fds[:], syscall.O_CLOEXEC) }

// waitExit blocks until the process pid has ended, without reaping it
// (waitid with WNOWAIT): until it is reaped, its pid, and so its process
// group's id, cannot be given to another process.
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// killOrphans kills what is left of an exec attempt whose flowrun process
// died on this host: every process whose environment says it belongs to
// that attempt (FLOWRUN_RUN_ID, FLOWRUN_STEP, FLOWRUN_ATTEMPT and
// FLOWRUN_OWNER, the dead owner, which
// every exec action and its descendants inherit), with its whole process
// group. Pdeathsig only reaches the action's direct child; its descendants
// (a shell's commands) would otherwise run on next to the step's next
// attempt. The environment, not a recorded pid, identifies them, so a pid
// reused by an unrelated process is never hit. It returns how many
// processes it found.
func killOrphans(runID, key string, attempt int, owner string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := [][]byte{
		[]byte("FLOWRUN_RUN_ID=" + runID),
		[]byte("FLOWRUN_STEP=" + key),
		[]byte("FLOWRUN_ATTEMPT=" + strconv.Itoa(attempt)),
		[]byte("FLOWRUN_OWNER=" + owner),
	}
	self := os.Getpid()
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !hasAll(bytes.Split(env, []byte{0}), want) {
			continue
		}
		n++
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != syscall.Getpgrp() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return n
}

// hasAll reports whether every wanted NAME=VALUE is among vars.
func hasAll(vars, want [][]byte) bool {
	for _, w := range want {
		found := false
		for _, v := range vars {
			if bytes.Equal(v, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ownerGone reports whether a lease owner ("host/pid/worker") was a process
// of this host that no longer exists.
func ownerGone(owner, host string) bool {
	h, pid, ok := parseOwner(owner)
	return ok && h == host && pid > 0 && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH
}
