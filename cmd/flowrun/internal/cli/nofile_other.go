//go:build !unix

package cli

// openFileLimit is the process's soft limit of open files (0: unknown).
func openFileLimit() int { return 0 }
