package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestColdBinary: the apply-mem scenario's copy of the binary has the
// same bytes, runs, keeps the command's arguments, and is not in the page
// cache when the scenario starts it (mincore counts none of its pages
// resident), so the processes read it from disk as an installed binary.
func TestColdBinary(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "flowrun")
	data := bytes.Repeat([]byte("flowrun binary "), 1<<16)
	if err := os.WriteFile(src, data, 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := coldBinary(Config{Flowrun: []string{src, "--child"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Flowrun) != 2 || c.Flowrun[0] == src || c.Flowrun[1] != "--child" {
		t.Fatalf("command %q, want a copy of %s with --child", c.Flowrun, src)
	}
	got, err := os.ReadFile(c.Flowrun[0])
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the copy differs from the binary (err %v)", err)
	}
	// Reading it back cached it again; copy and drop once more to look.
	c, err = coldBinary(Config{Flowrun: []string{src}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(c.Flowrun[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("the copy's mode %v is not executable", st.Mode())
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	if resident != 0 {
		t.Fatalf("%d of the copy's %d pages are in the page cache", resident, len(vec))
	}
}
