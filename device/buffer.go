package device

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// AlignedBuffer returns n bytes from an anonymous private mmap, rounded up to
// whole pages. The memory is outside the Go heap: it is page aligned (so it
// satisfies every sector size up to the page size), never moved by the
// garbage collector and never scanned by it. Release it with FreeBuffer.
func AlignedBuffer(n int) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("device: aligned buffer of %d bytes", n)
	}
	page := unix.Getpagesize()
	size := (n + page - 1) / page * page
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("device: mmap %d bytes for an aligned buffer: %w", size, err)
	}
	return b[:n], nil
}

// FreeBuffer unmaps a buffer returned by AlignedBuffer, passed as it was
// returned (same start; its length may have been changed). The buffer must not
// be in flight (its completion must have been delivered).
func FreeBuffer(b []byte) error {
	if cap(b) == 0 {
		return nil
	}
	if err := unix.Munmap(b[:cap(b)]); err != nil {
		return fmt.Errorf("device: munmap aligned buffer: %w", err)
	}
	return nil
}
