//go:build linux

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inotifySource reports the changes of one file with inotify. Its
// descriptor is non-blocking, so a read waits in the Go runtime's poller
// (no thread is held) and closing the file ends it.
type inotifySource struct {
	f   *os.File
	buf []byte
}

// watchLog watches the database's write-ahead log: every commit of every
// process writes to it (IN_MODIFY). The log exists while the store is
// open (the store's own connections keep it).
func watchLog(path string) (*logWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watching %s: %w", path, err)
	}
	return newLogWatcher(&inotifySource{f: os.NewFile(uintptr(fd), "inotify:"+path), buf: make([]byte, 64*unix.SizeofInotifyEvent)}), nil
}

// errLogGone says the watched log was deleted or renamed (another program
// changed the journal mode or replaced the file): commits are no longer
// seen, and waiters poll.
var errLogGone = errors.New("the database's write-ahead log was removed or replaced")

func (s *inotifySource) next() error {
	n, err := s.f.Read(s.buf)
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return errClosed
		}
		return fmt.Errorf("reading inotify events: %w", err)
	}
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&s.buf[off]))
		if ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
			return errLogGone
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	return nil
}

func (s *inotifySource) close() error { return s.f.Close() }
