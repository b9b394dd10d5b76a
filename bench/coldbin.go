package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// coldBinary copies the flowrun binary of c into dir and drops the copy's
// pages from the operating system's page cache (where it can), returning
// c with the copy as its command.
//
// The peak RSS of a process counts the pages of its binary that it maps,
// and a page fault maps the cached pages around the one it needs, as many
// as the cache holds together: a binary the linker has just written sits
// in the cache in larger pieces than one read back from disk, so the same
// binary peaks higher right after `go build` than once installed. Reading
// a fresh copy from disk measures every build as a user runs it, and makes
// two builds comparable.
func coldBinary(c Config, dir string) (Config, error) {
	bin, err := exec.LookPath(c.Flowrun[0])
	if err != nil {
		return c, fmt.Errorf("finding the flowrun binary: %w", err)
	}
	src, err := os.Open(bin)
	if err != nil {
		return c, fmt.Errorf("reading the flowrun binary: %w", err)
	}
	defer src.Close()
	// The copy keeps the binary's name, which a multi-call binary (the
	// tests' flowrun) dispatches on.
	cold := filepath.Join(dir, "cold")
	if err := os.MkdirAll(cold, 0o700); err != nil {
		return c, fmt.Errorf("copying the flowrun binary: %w", err)
	}
	cp := filepath.Join(cold, filepath.Base(bin))
	dst, err := os.OpenFile(cp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o700)
	if err != nil {
		return c, fmt.Errorf("copying the flowrun binary: %w", err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return c, fmt.Errorf("copying the flowrun binary: %w", err)
	}
	// Only written-back pages leave the cache.
	if err := dst.Sync(); err != nil {
		dst.Close()
		return c, fmt.Errorf("copying the flowrun binary: %w", err)
	}
	if err := dropCached(dst); err != nil {
		dst.Close()
		return c, fmt.Errorf("dropping the flowrun binary's copy from the page cache: %w", err)
	}
	if err := dst.Close(); err != nil {
		return c, fmt.Errorf("copying the flowrun binary: %w", err)
	}
	c.Flowrun = append([]string{cp}, c.Flowrun[1:]...)
	return c, nil
}
