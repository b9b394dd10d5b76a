package graph

import (
	"testing"
	"unsafe"
)

// TestSlabBlocksFitPages: a slab's blocks of a large struct stay within
// fastSlabBytes, so that a block of steps fills its pages (256 steps took
// nine 8 KiB pages for 8.25 pages of steps), and a small struct still
// grows to 256 a block.
func TestSlabBlocksFitPages(t *testing.T) {
	var steps fastSlab[Step]
	size := int(unsafe.Sizeof(Step{}))
	for range 4000 {
		steps.new()
		if steps.next*size > fastSlabBytes {
			t.Fatalf("a block of %d steps is %d bytes; want at most %d", steps.next, steps.next*size, fastSlabBytes)
		}
	}
	if waste := (fastSlabBytes - steps.next*size); waste >= size {
		t.Errorf("a full block of steps leaves %d bytes of its pages unused; want less than a step (%d)", waste, size)
	}
	var exprs fastSlab[Expr]
	for range 1000 {
		exprs.new()
	}
	if exprs.next != 256 {
		t.Errorf("a slab of Expr grows to blocks of %d; want 256", exprs.next)
	}
}

// TestSlabReserve: after reserve(n), the next n structs are the n
// elements of one block, one after the other.
func TestSlabReserve(t *testing.T) {
	var s fastSlab[Step]
	s.new() // a block of 8, 7 free
	s.reserve(5)
	if len(s.free) != 7 {
		t.Fatalf("reserve(5) with 7 free replaced the block (%d free)", len(s.free))
	}
	s.reserve(1000)
	first := s.new()
	for i := 1; i < 1000; i++ {
		if p := s.new(); p != (*Step)(unsafe.Add(unsafe.Pointer(first), i*int(unsafe.Sizeof(Step{})))) {
			t.Fatalf("step %d after reserve(1000) is not the next element of the block", i)
		}
	}
}
