package keyspace

import "testing"

func TestAppendKey(t *testing.T) {
	tests := []struct {
		prefix string
		k      uint64
		width  int
		want   string
	}{
		{"", 0, 1, "0"},
		{"", 0, 4, "0000"},
		{"", 7, 3, "007"},
		{"", 99999, 5, "99999"},
		{"", 12, 16, "0000000000000012"},
		{"x", 0, 16, "x0000000000000000"},
		{"x", 42, 16, "x0000000000000042"},
		{"x", 2499999, 7, "x2499999"},
		{"x", 7, 1, "x7"},
		{"", 1<<64 - 1, 20, "18446744073709551615"},
	}
	for _, tt := range tests {
		if got := string(AppendKey([]byte(tt.prefix), tt.k, tt.width)); got != tt.want {
			t.Errorf("AppendKey(%q, %d, %d) = %q, want %q", tt.prefix, tt.k, tt.width, got, tt.want)
		}
	}
}

// TestPutKeyMatchesAppendKey holds the in-place writer of pre-built requests
// to the one spelling, over a slot that held another key before.
func TestPutKeyMatchesAppendKey(t *testing.T) {
	for _, tt := range []struct {
		k     uint64
		width int
	}{{0, 1}, {0, 8}, {9, 1}, {10, 2}, {123456, 8}, {99999999, 8}, {1<<64 - 1, 20}} {
		slot := []byte("99999999999999999999"[:tt.width])
		PutKey(slot, tt.k)
		if want := string(AppendKey(nil, tt.k, tt.width)); string(slot) != want {
			t.Errorf("PutKey(%d) into %d bytes = %q, want %q", tt.k, tt.width, slot, want)
		}
	}
}

func TestDigits(t *testing.T) {
	for _, tt := range []struct {
		v    uint64
		want int
	}{{0, 1}, {9, 1}, {10, 2}, {99999, 5}, {100000, 6}, {1<<64 - 1, 20}} {
		if got := Digits(tt.v); got != tt.want {
			t.Errorf("Digits(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

func TestAppendKeyAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 16)
	k := uint64(0)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendKey(buf[:0], k, 16)
		k += 7919
	})
	if allocs != 0 {
		t.Errorf("AppendKey into a buffer with room allocated %v times, want 0", allocs)
	}
}

func TestSplitCoversEveryKeyOnce(t *testing.T) {
	for _, tt := range []struct {
		n     int64
		parts int
	}{{10007, 3}, {10, 4}, {3, 8}, {1, 1}, {1000000, 7}} {
		next := int64(0)
		for i := range tt.parts {
			lo, hi := Split(tt.n, tt.parts, i)
			if lo != next || hi < lo {
				t.Fatalf("n=%d parts=%d: part %d gets [%d, %d), want it to start at %d", tt.n, tt.parts, i, lo, hi, next)
			}
			next = hi
		}
		if next != tt.n {
			t.Errorf("n=%d parts=%d: ranges end at %d, want %d", tt.n, tt.parts, next, tt.n)
		}
	}
}
