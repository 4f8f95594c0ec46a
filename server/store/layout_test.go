package store

import (
	"testing"
	"unsafe"
)

// TestSlotLayout: a pending read is three cache lines, each holding the
// fields one step of a read touches (see pendingRead), and a chunk's slots
// start on a line, so that no slot straddles one more.
func TestSlotLayout(t *testing.T) {
	const line = 64
	var pr pendingRead
	for _, tc := range []struct {
		what      string
		got, want uintptr
	}{
		{"size of a pending read", unsafe.Sizeof(pr), 3 * line},
		{"offset of window (the second line)", unsafe.Offsetof(pr.window), line},
		{"offset of big (the third line)", unsafe.Offsetof(pr.big), 2 * line},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.what, tc.got, tc.want)
		}
	}
	chunks := make([]*slotChunk, 50)
	for i := range chunks {
		chunks[i] = new(slotChunk)
		if at := uintptr(unsafe.Pointer(&chunks[i].slots[0])); at%line != 0 {
			t.Fatalf("a new chunk's slots start at %#x, %d bytes past a line", at, at%line)
		}
	}
}
