//go:build !linux

package interp

import "os/exec"

// holdable is false outside Linux: an exec action's program is created
// after the commit of its start (see the Linux startHeld).
func holdable(*exec.Cmd) bool { return false }

func startHeld(*exec.Cmd) bool { return false }

func release(int) error { return nil }

func holdRefused() {}
