package store

import (
	"testing"
	"unsafe"
)

// TestChunkBuffers: buffers are page-aligned, of the asked size, cut from
// 2 MiB-aligned regions, never handed out twice at once, and reused once
// put back; a size past a huge page gets a mapping of its own.
func TestChunkBuffers(t *testing.T) {
	for _, size := range []int{128 << 10, 3 << 20} {
		c := chunkBuffers{size: size}
		perRegion := max(hugePageBytes/size, 1)
		seen := map[uintptr]bool{}
		var bufs [][]byte
		for range perRegion + 2 { // into a second region
			b, err := c.get()
			if err != nil {
				t.Fatalf("size %d: get: %v", size, err)
			}
			at := uintptr(unsafe.Pointer(&b[0]))
			if len(b) != size || cap(b) != size || at%4096 != 0 {
				t.Fatalf("size %d: got a buffer at %#x of len %d cap %d, want page-aligned, len and cap %d", size, at, len(b), cap(b), size)
			}
			if seen[at] {
				t.Fatalf("size %d: the buffer at %#x was handed out twice", size, at)
			}
			seen[at] = true
			b[0], b[size-1] = 1, 2 // mapped and writable
			bufs = append(bufs, b)
		}
		if size <= hugePageBytes {
			if at := uintptr(unsafe.Pointer(&c.regions[0][0])); at%hugePageBytes != 0 {
				t.Errorf("size %d: region at %#x, not on a 2 MiB boundary", size, at)
			}
		}
		if got, want := len(c.regions), (perRegion+2+perRegion-1)/perRegion; got != want {
			t.Errorf("size %d: %d regions mapped for %d buffers, want %d", size, got, perRegion+2, want)
		}
		c.put(bufs[1])
		if b, _ := c.get(); &b[0] != &bufs[1][0] {
			t.Errorf("size %d: a buffer put back was not reused", size)
		}
		c.release()
		if len(c.regions) != 0 || len(c.free) != 0 {
			t.Errorf("size %d: after release %d regions and %d free buffers, want none", size, len(c.regions), len(c.free))
		}
	}
}
