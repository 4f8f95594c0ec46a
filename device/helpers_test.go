package device

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/testenv"
)

// result is one completion as the tests see it.
type result struct {
	userData uint64
	n        int
	err      error
}

// collector gathers completions on a channel.
type collector struct{ ch chan result }

func newCollector(capacity int) *collector { return &collector{ch: make(chan result, capacity)} }

func (c *collector) onComplete(ud uint64, n int, err error) { c.ch <- result{ud, n, err} }

func (c *collector) wait(t *testing.T) result {
	t.Helper()
	select {
	case r := <-c.ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("no completion within 20 s")
		return result{}
	}
}

// backends lists every backend; file backends are skipped only when the
// kernel refuses their setup syscall.
var backends = []string{BackendLocalMemory, BackendLibaio, BackendUring}

// openTest opens a device for a test, skipping only when the kernel refuses
// the backend, and closes it when the test ends.
func openTest(t *testing.T, cfg Config) Device {
	t.Helper()
	if cfg.Dir == "" && cfg.Backend != BackendLocalMemory {
		cfg.Dir = testenv.MustDiskDir(t)
	}
	if cfg.SegmentBytes == 0 {
		cfg.SegmentBytes = 1 << 20
	}
	d, err := Open(cfg)
	if err != nil {
		var errno unix.Errno
		if errors.Is(err, ErrKernelRefused) && errors.As(err, &errno) {
			t.Skipf("the kernel refuses the %s backend: %v (errno %d)", cfg.Backend, err, int(errno))
		}
		t.Fatalf("Open(%s): %v", cfg.Backend, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// stamp fills b, which sits at device offset off, with the test pattern:
// every 512-byte sector's words are derived from that sector's offset.
func stamp(b []byte, off uint64) {
	for s := 0; s < len(b); s += 512 {
		for w := 0; w < 512; w += 8 {
			binary.LittleEndian.PutUint64(b[s+w:], (off+uint64(s))*2654435761+uint64(w))
		}
	}
}

// firstMismatch returns the index of the first 8-byte word of b that does
// not hold the pattern for offset off, as a byte index, or -1. It allocates
// nothing, so completion functions can call it.
func firstMismatch(b []byte, off uint64) int {
	for s := 0; s < len(b); s += 512 {
		for w := 0; w < 512 && s+w+8 <= len(b); w += 8 {
			if binary.LittleEndian.Uint64(b[s+w:]) != (off+uint64(s))*2654435761+uint64(w) {
				return s + w
			}
		}
	}
	return -1
}

func mustBuffer(t testing.TB, n int) []byte {
	t.Helper()
	b, err := AlignedBuffer(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { FreeBuffer(b) })
	return b
}

// checkRead fails t unless r is read i, whole and without error, and buf
// holds the test pattern of offset off.
func checkRead(t *testing.T, r result, i int, buf []byte, off uint64) {
	t.Helper()
	if r.err != nil || r.n != len(buf) || r.userData != uint64(i) {
		t.Fatalf("read %d: got %+v, want %d bytes", i, r, len(buf))
	}
	if at := firstMismatch(buf, off); at >= 0 {
		t.Fatalf("read %d at %d: wrong bytes at %d", i, off, at)
	}
}

// submitWait submits one request and waits for its completion.
func submitWait(t *testing.T, d Device, c *collector, r Request) result {
	t.Helper()
	if n, err := d.Submit([]Request{r}); err != nil || n != 1 {
		t.Fatalf("Submit(%s at %d): got (%d, %v), want (1, nil)", r.Op, r.Offset, n, err)
	}
	return c.wait(t)
}

// maxInFlightOf reads a backend's in-flight high-water mark.
func maxInFlightOf(d Device) int64 {
	return d.(interface{ maxInFlightSeen() int64 }).maxInFlightSeen()
}

// dirOf is the directory of a file backend ("" for localmemory).
func dirOf(d Device) string {
	if f, ok := d.(interface{ dir() string }); ok {
		return f.dir()
	}
	return ""
}
