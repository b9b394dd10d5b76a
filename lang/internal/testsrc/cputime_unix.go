//go:build unix

package testsrc

import (
	"syscall"
	"time"
)

// ProcessCPU returns the processor time (user and system) the process has
// used so far.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
