package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropCached asks the kernel to drop f's clean pages from the page cache.
func dropCached(f *os.File) error {
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
