package device

import (
	"testing"
	"unsafe"
)

func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{1, 512, 4096, 4097, 1 << 20} {
		b, err := AlignedBuffer(n)
		if err != nil {
			t.Fatalf("AlignedBuffer(%d): %v", n, err)
		}
		if len(b) != n {
			t.Errorf("AlignedBuffer(%d): got len %d, want %d", n, len(b), n)
		}
		if addr := uintptr(unsafe.Pointer(&b[0])); addr%4096 != 0 {
			t.Errorf("AlignedBuffer(%d): got address %#x, want 4096-aligned", n, addr)
		}
		b[n-1] = 1
		if err := FreeBuffer(b); err != nil {
			t.Errorf("FreeBuffer: %v", err)
		}
	}
	if _, err := AlignedBuffer(0); err == nil {
		t.Errorf("AlignedBuffer(0): got nil error, want one")
	}
}
