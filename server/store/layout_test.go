package store

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/tierbench/tierbench/internal/cacheline"
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

// TestNoteRecordStaysInWindow runs noteRecord over records at every kind
// of offset in their sector, windows shorter than the record guessed and
// long keys: it must note only lines of the window, from the record's
// own, touch nothing past the window (an index past it panics) and, with
// the Prefetch that follows, allocate nothing.
func TestNoteRecordStaysInWindow(t *testing.T) {
	st := openTest(t, smallConfig(t, "localmemory"))
	sess := newTestSession(t, st)
	sector := st.sector
	tests := []struct {
		name       string
		addr       uint64 // the record's address; the window starts at its sector
		window     int
		keyLen     uint8
		valueGuess uint64
	}{
		{"at the sector's start", 10 * sector, 512, 16, 96},
		{"mid-sector", 10*sector + 200, 512, 16, 96},
		{"last byte of the sector", 11*sector - 8, 512, 16, 96},
		{"record longer than the window", 10*sector + 448, 512, 16, 1 << 20},
		{"long key", 10*sector + 64, 1024, keyIsLong, 96},
		{"window shorter than the offset", 10*sector + 300, 256, 16, 96},
		{"empty window", 10*sector + 300, 0, 16, 96},
	}
	for _, tt := range tests {
		pr := &pendingRead{addr: tt.addr, window: make([]byte, tt.window), keyLen: tt.keyLen}
		sess.valueGuess = tt.valueGuess
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: noteRecord panicked: %v", tt.name, r)
				}
			}()
			sess.noteRecord(pr)
			lines := slices.Clone(sess.prefetch)
			sess.Prefetch()
			if len(pr.window) > 0 {
				first := uintptr(unsafe.Pointer(&pr.window[0]))
				own := first + uintptr(tt.addr%sector)&^(cacheline.Bytes-1)
				for _, l := range lines {
					if l < own || l >= first+uintptr(len(pr.window)) || (l-first)%cacheline.Bytes != 0 {
						t.Errorf("%s: noted %#x, want a line of the window from its record's, [%#x, %#x)", tt.name, l, own, first+uintptr(len(pr.window)))
					}
				}
			}
			if len(sess.prefetch) != 0 {
				t.Errorf("%s: %d lines still noted after Prefetch, want 0", tt.name, len(sess.prefetch))
			}
			if allocs := testing.AllocsPerRun(10, func() { sess.noteRecord(pr); sess.Prefetch() }); allocs != 0 {
				t.Errorf("%s: %v allocations, want 0", tt.name, allocs)
			}
		}()
	}
}

// TestPrefetchKeyNotesTheBucket: PrefetchKey notes the line of the key's
// index bucket (and, once the session has free slots, the slot its next
// device read takes), Prefetch issues and forgets them, and neither
// allocates once the list has grown.
func TestPrefetchKeyNotesTheBucket(t *testing.T) {
	st := openTest(t, smallConfig(t, "localmemory"))
	sess := newTestSession(t, st)
	key := []byte("key:000000000042")
	sess.PrefetchKey(key)
	bucket := uintptr(unsafe.Pointer(&st.ix.mainBucket(st.hash(key))[0]))
	if len(sess.prefetch) == 0 || sess.prefetch[0] != bucket {
		t.Fatalf("got lines %#x, want the bucket's %#x first", sess.prefetch, bucket)
	}
	if want := 1 + 2*min(1, len(sess.free)); len(sess.prefetch) != want {
		t.Errorf("got %d lines noted with %d free slots, want %d", len(sess.prefetch), len(sess.free), want)
	}
	sess.Prefetch()
	if len(sess.prefetch) != 0 {
		t.Errorf("got %d lines noted after Prefetch, want 0", len(sess.prefetch))
	}
	if allocs := testing.AllocsPerRun(100, func() {
		for range 8 {
			sess.PrefetchKey(key)
		}
		sess.Prefetch()
	}); allocs != 0 {
		t.Errorf("got %v allocations per batch, want 0", allocs)
	}
}
