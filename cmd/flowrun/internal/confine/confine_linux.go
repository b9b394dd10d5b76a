//go:build linux

package confine

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nonDumpable marks the process non-dumpable: its /proc files other than
// cmdline and stat become root's, and readable only with CAP_SYS_PTRACE.
// The flag is the process's own: a program it starts is dumpable again
// after its execve, so tracing and holding children is unaffected.
func nonDumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// blank overwrites s with '*' when its bytes lie in the argument or
// environment area of the process's initial stack (what /proc/PID/cmdline
// and /proc/PID/environ show), and leaves it alone otherwise: a string
// elsewhere may be read-only or shared.
func blank(s string) {
	if s == "" {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	areas, ok := stackAreas()
	if !ok {
		return
	}
	for _, a := range areas {
		if p >= a[0] && p+uintptr(len(s)) <= a[1] {
			b := unsafe.Slice(unsafe.StringData(s), len(s))
			for i := range b {
				b[i] = '*'
			}
			return
		}
	}
}

// blankEnv overwrites with '*' the Postgres password in the original of
// the environment variable name (what /proc/PID/environ shows), through
// /proc/self/mem. The process's own copy, which os.Getenv reads, is left
// whole.
func blankEnv(name string) {
	areas, ok := stackAreas()
	if !ok {
		return
	}
	start, end := areas[1][0], areas[1][1]
	f, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, end-start)
	if _, err := f.ReadAt(buf, int64(start)); err != nil {
		return
	}
	prefix := []byte(name + "=")
	for off := 0; off < len(buf); {
		n := bytes.IndexByte(buf[off:], 0)
		if n < 0 {
			n = len(buf) - off
		}
		entry := buf[off : off+n]
		if bytes.HasPrefix(entry, prefix) {
			val := string(entry[len(prefix):])
			if s, e, ok := Password(val); ok {
				at := off + len(prefix) + s
				_, _ = f.WriteAt(bytes.Repeat([]byte{'*'}, e-s), int64(start)+int64(at))
			}
		}
		off += n + 1
	}
}

// stackAreas returns the argument and environment areas of the process,
// from fields 48 to 51 of /proc/self/stat (arg_start, arg_end, env_start,
// env_end).
func stackAreas() ([2][2]uintptr, bool) {
	var areas [2][2]uintptr
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return areas, false
	}
	s := string(b)
	i := strings.LastIndex(s, ")") // the command name may hold blanks
	if i < 0 {
		return areas, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	const argStart = 48 - 3
	if len(f) < argStart+4 {
		return areas, false
	}
	var v [4]uintptr
	for k := range v {
		n, err := strconv.ParseUint(f[argStart+k], 10, 64)
		if err != nil || n == 0 {
			return areas, false
		}
		v[k] = uintptr(n)
	}
	areas[0] = [2]uintptr{v[0], v[1]}
	areas[1] = [2]uintptr{v[2], v[3]}
	return areas, true
}
