// Package deepstack grows the calling goroutine's stack once, while few
// frames are on it, before the goroutine runs work whose calls go deep
// (building the CEL environment, SQLite's parser and pager).
//
// Go starts a goroutine on a small stack and, each time a call needs more,
// copies the stack to one twice the size. A copy unwinds every frame on
// the stack and reads each frame's function metadata (its stack-pointer
// table and stack maps), which lies in the binary in the order of the
// code, package by package. Copying a deep stack of a dozen packages'
// functions therefore maps a window of the binary's pages per package: in
// a short `flowrun apply` these copies mapped a good share of the process's
// resident memory. Growing the stack at a goroutine's entry makes each
// copy read the few frames there, and the deep work finds room.
//
// deepstack must not import anything (so that its init runs among the
// first), nor hold state: it is called first thing on the main goroutine
// and on the engine's goroutines that call the store.
package deepstack

// frame is the size of grow's frame. A goroutine's stack starts at a few
// KiB and doubles; a frame this large takes it to the size that the
// deepest calls of a short apply reached (the main goroutine's, a run's).
const frame = 40 << 10

// Grow grows the calling goroutine's stack so that it holds frame bytes
// more than it holds now.
func Grow() {
	grow(0)
}

// grow has a frame of frame bytes; it writes and reads the array so that
// the compiler keeps it.
//
//go:noinline
func grow(i int) byte {
	var b [frame]byte
	b[i] = 1
	return b[(i*7+1)%len(b)]
}

// init grows the main goroutine's stack before the packages whose inits
// go deep run theirs (protobuf's descriptors, cel-go's tables): a package
// that imports nothing is initialized among the first, in import-path
// order.
func init() { Grow() }
