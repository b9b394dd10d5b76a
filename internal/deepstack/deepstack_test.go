package deepstack

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// deep recurses n times through frames of about 200 bytes.
//
//go:noinline
func deep(n int) int {
	var pad [24]int
	pad[n%len(pad)] = n
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[(n+1)%len(pad)]
}

// moved runs, on a new goroutine, grow (when asked) and then a call
// chain deep enough to need about 20 KiB of stack, and reports whether
// the goroutine's stack moved during the chain (a local's address
// changed: the runtime copied the stack to a larger one).
func moved(t *testing.T, grow bool) bool {
	t.Helper()
	// A collection could shrink the stack between the two addresses.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	res := make(chan bool)
	go func() {
		if grow {
			Grow()
		}
		var x byte
		before := uintptr(unsafe.Pointer(&x))
		deep(100)
		res <- uintptr(unsafe.Pointer(&x)) != before
	}()
	return <-res
}

// TestGrowKeepsDeepCallsInPlace: after Grow, a deep call chain runs in the
// stack Grow made (the stack is not copied again), where without it the
// same chain makes the runtime copy the stack.
func TestGrowKeepsDeepCallsInPlace(t *testing.T) {
	if !moved(t, false) {
		t.Fatal("a 20 KiB call chain on a new goroutine did not move its stack: the test cannot tell Grow's effect")
	}
	if moved(t, true) {
		t.Fatal("after Grow, a 20 KiB call chain moved the goroutine's stack")
	}
}
