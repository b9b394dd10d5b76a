//go:build !unix

package testsrc

import "time"

// ProcessCPU is not measured on this system.
func ProcessCPU() time.Duration { return 0 }
