package cacheline

import (
	"testing"
	"unsafe"
)

// TestPrefetchNeverFaults: a prefetch is a hint, whatever its address: nil,
// unmapped, kernel space, or a line of live memory. A fault here would
// kill the server on a stale slot's address.
func TestPrefetchNeverFaults(t *testing.T) {
	buf := make([]byte, 4*Bytes)
	addrs := []uintptr{0, 8, 1 << 46, ^uintptr(0) &^ (Bytes - 1), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&buf[3*Bytes]))}
	PrefetchAll(nil)
	PrefetchAll(addrs[:0])
	PrefetchAll(addrs)
	Prefetch(nil)
	Prefetch(unsafe.Pointer(&buf[Bytes]))
	if allocs := testing.AllocsPerRun(100, func() { PrefetchAll(addrs) }); allocs != 0 {
		t.Errorf("got %v allocations, want 0", allocs)
	}
}
