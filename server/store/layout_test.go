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
		{"offset of keyLong (the third line)", unsafe.Offsetof(pr.keyLong), 2 * line},
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

// TestSlotKey: a slot gives back the key it was given, whatever its length
// and whatever the slot held before, in its second line when it fits.
func TestSlotKey(t *testing.T) {
	var pr pendingRead
	for _, n := range []int{16, 0, 23, 24, 300, 5, 23, 1000, 1} {
		key := make([]byte, n)
		for i := range key {
			key[i] = byte(n + i)
		}
		pr.setKey(key)
		got := pr.key()
		if string(got) != string(key) {
			t.Fatalf("key of %d bytes: got %d bytes %q, want %q", n, len(got), got, key)
		}
		inline := n <= len(pr.keyIn)
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(got))) - uintptr(unsafe.Pointer(&pr)); inline && n > 0 && (at < 64 || at+uintptr(n) > 128) {
			t.Errorf("key of %d bytes at offset %d of the slot, want inside its second line", n, at)
		}
		if !inline && pr.keyLen != keyIsLong {
			t.Errorf("key of %d bytes: keyLen %d, want keyIsLong", n, pr.keyLen)
		}
	}
}
