package device

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestUringLayout checks the shared structures against <linux/io_uring.h>.
func TestUringLayout(t *testing.T) {
	var p uringParams
	var sqe uringSQE
	var cqe uringCQE
	tests := []struct {
		field     string
		got, want uintptr
	}{
		{"params.features", unsafe.Offsetof(p.features), 20},
		{"params.sq_off", unsafe.Offsetof(p.sqOff), 40},
		{"params.cq_off", unsafe.Offsetof(p.cqOff), 80},
		{"sq_off.array", unsafe.Offsetof(p.sqOff.array), 24},
		{"cq_off.cqes", unsafe.Offsetof(p.cqOff.cqes), 20},
		{"sizeof params", unsafe.Sizeof(p), 120},
		{"sqe.fd", unsafe.Offsetof(sqe.fd), 4},
		{"sqe.off", unsafe.Offsetof(sqe.off), 8},
		{"sqe.addr", unsafe.Offsetof(sqe.addr), 16},
		{"sqe.len", unsafe.Offsetof(sqe.len), 24},
		{"sqe.rw_flags", unsafe.Offsetof(sqe.opFlags), 28},
		{"sqe.user_data", unsafe.Offsetof(sqe.userData), 32},
		{"sqe.buf_index", unsafe.Offsetof(sqe.bufIndex), 40},
		{"sqe.addr3", unsafe.Offsetof(sqe.addr3), 48},
		{"sizeof sqe", unsafe.Sizeof(sqe), 64},
		{"cqe.res", unsafe.Offsetof(cqe.res), 8},
		{"sizeof cqe", unsafe.Sizeof(cqe), 16},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got offset %d, want %d", tt.field, tt.got, tt.want)
		}
	}
}

func TestNextPow2(t *testing.T) {
	for _, tt := range []struct{ in, want uint32 }{{0, 1}, {1, 1}, {2, 2}, {3, 4}, {4096, 4096}, {4097, 8192}} {
		if got := nextPow2(tt.in); got != tt.want {
			t.Errorf("nextPow2(%d): got %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestUringRings opens the default number of rings and a single ring, and
// checks the SQ/CQ sizes the kernel granted cover the throttle.
func TestUringRings(t *testing.T) {
	for _, rings := range []int{0, 1} {
		d := openTest(t, Config{Backend: BackendUring, IOContexts: rings, ThrottleLimit: 3000, OnComplete: func(uint64, int, error) {}})
		u := d.(*uringDevice)
		want := rings
		if want == 0 {
			want = DefaultIOContexts(BackendUring, 0)
		}
		if len(u.rings) != want {
			t.Errorf("IOContexts %d: got %d rings, want %d", rings, len(u.rings), want)
		}
		for i, r := range u.rings {
			if uint32(len(r.cqes)) < 3000 || r.sqEntries == 0 || r.sqEntries&(r.sqEntries-1) != 0 {
				t.Errorf("ring %d: got SQ %d, CQ %d entries, want a power-of-two SQ and CQ ≥ 3000", i, r.sqEntries, len(r.cqes))
			}
		}
		// Sparse registered buffers and COOP_TASKRUN both came with 5.19:
		// a kernel has both or neither.
		if coop := strings.Contains(u.Describe(), "COOP_TASKRUN"); coop != (u.fixed.refused == nil) {
			t.Errorf("COOP_TASKRUN %v but registered buffers refused by %v: %s", coop, u.fixed.refused, u.Describe())
		}
		if !strings.Contains(u.Describe(), "no SQPOLL") {
			t.Errorf("Describe: got %q", u.Describe())
		}
	}
}

// TestUringVectoredFallback forces the READV/WRITEV path used on kernels
// before 5.6 and checks it moves the right bytes.
func TestUringVectoredFallback(t *testing.T) {
	uringForceVectored = true
	defer func() { uringForceVectored = false }()
	c := newCollector(16)
	d := openTest(t, Config{Backend: BackendUring, SegmentBytes: 256 << 10, SectorSize: 512, OnComplete: c.onComplete})
	if desc := d.(Describer).Describe(); !strings.Contains(desc, "READV/WRITEV") {
		t.Fatalf("Describe: got %q, want READV/WRITEV", desc)
	}
	data := mustBuffer(t, 256<<10)
	stamp(data, 0)
	if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: data}); r.err != nil || r.n != len(data) {
		t.Fatalf("vectored write: got (n %d, %v)", r.n, r.err)
	}
	buf := mustBuffer(t, 8*1024)
	readEight(t, d, c, buf, 0, 29)
	// The last sector of the segment, right at the end of the file.
	if r := submitWait(t, d, c, Request{Op: OpRead, Offset: 256<<10 - 512, Buf: buf[:512]}); r.err != nil {
		t.Errorf("last sector: %v", r.err)
	}
}

// TestUringFixedBuffers reads into a registered buffer with
// IORING_OP_READ_FIXED and checks the bytes; that the kernel really took
// the fixed path (an address outside the registered buffer, or a buffer
// no longer registered, is refused with EFAULT, where a plain read would
// succeed); and that a full table hands out 0, the plain path, until an
// entry is released.
func TestUringFixedBuffers(t *testing.T) {
	defer func(n int) { uringFixedTableEntries = n }(uringFixedTableEntries)
	uringFixedTableEntries = 2
	d, u, c := openTwoRings(t)
	if u.fixed.refused != nil {
		t.Skipf("the kernel has no registered buffers: %v", u.fixed.refused)
	}
	data := mustBuffer(t, 256<<10)
	stamp(data, 0)
	if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: data}); r.err != nil || r.n != len(data) {
		t.Fatalf("write: got (n %d, %v)", r.n, r.err)
	}
	buf, other := mustBuffer(t, 8*1024), mustBuffer(t, 4096)
	fixed := u.RegisterBuffer(buf)
	if fixed == 0 {
		t.Fatalf("RegisterBuffer: got 0 with an empty table (%s)", u.Describe())
	}
	if desc := u.Describe(); !strings.Contains(desc, "registered buffers (1 of 2 in use)") {
		t.Errorf("Describe: got %q", desc)
	}
	readEight(t, d, c, buf, fixed, 37)
	if r := submitWait(t, d, c, Request{Op: OpRead, Fixed: fixed, Offset: 0, Buf: other[:512]}); !errors.Is(r.err, unix.EFAULT) {
		t.Errorf("fixed read into a buffer outside the registered one: got %v, want EFAULT", r.err)
	}
	second := u.RegisterBuffer(other)
	if second == 0 || second == fixed || u.RegisterBuffer(other) != 0 {
		t.Fatalf("RegisterBuffer on a table of 2: got %d after %d, and a third not refused", second, fixed)
	}
	u.UnregisterBuffer(fixed)
	if r := submitWait(t, d, c, Request{Op: OpRead, Fixed: fixed, Offset: 0, Buf: buf[:512]}); !errors.Is(r.err, unix.EFAULT) {
		t.Errorf("fixed read after UnregisterBuffer: got %v, want EFAULT", r.err)
	}
	if r := submitWait(t, d, c, Request{Op: OpRead, Offset: 512, Buf: buf[:512]}); r.err != nil || firstMismatch(buf[:512], 512) >= 0 {
		t.Errorf("plain read into the unregistered buffer: got %v", r.err)
	}
	if again := u.RegisterBuffer(buf); again == 0 {
		t.Errorf("RegisterBuffer after a release: got 0")
	}
}

// readEight reads eight KiB-long pieces of the stamped file, stride sectors
// apart, into the eight KiB of buf in one Submit (with fixed as
// Request.Fixed), and checks every byte.
func readEight(t *testing.T, d Device, c *collector, buf []byte, fixed uint16, stride int) {
	t.Helper()
	reqs := make([]Request, 8)
	for i := range reqs {
		reqs[i] = Request{Op: OpRead, Fixed: fixed, Offset: uint64(i*stride+3) * 512, Buf: buf[i*1024 : i*1024+1024], UserData: uint64(i)}
	}
	if n, err := d.Submit(reqs); n != len(reqs) || err != nil {
		t.Fatalf("Submit: got (%d, %v)", n, err)
	}
	for range reqs {
		r := c.wait(t)
		q := reqs[r.userData]
		if r.err != nil || r.n != 1024 || firstMismatch(q.Buf, q.Offset) >= 0 {
			t.Errorf("read at %d (fixed %d): got (n %d, %v, mismatch at %d)", q.Offset, fixed, r.n, r.err, firstMismatch(q.Buf, q.Offset))
		}
	}
}

// TestUringFixedFiles checks that a segment's file becomes entry n of the
// rings' file tables on its first request and that reads then go by that
// entry: once the kernel's entry is cleared behind the device's back, a
// read of the segment fails with EBADF, where a read by descriptor would
// succeed.
func TestUringFixedFiles(t *testing.T) {
	d, u, c := openTwoRings(t)
	if u.fixed.filesRefused != nil {
		t.Skipf("the kernel has no registered files: %v", u.fixed.filesRefused)
	}
	data := mustBuffer(t, 256<<10)
	for seg := range uint64(2) {
		stamp(data, seg<<18)
		if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: seg << 18, Buf: data}); r.err != nil {
			t.Fatalf("write segment %d: %v", seg, r.err)
		}
	}
	buf := mustBuffer(t, 8*1024)
	readEight(t, d, c, buf, 0, 29)
	if v := u.fixed.files[0].Load(); v <= 0 || !strings.Contains(u.Describe(), "registered files") {
		t.Fatalf("segment 0: files entry %d, Describe %q; want it registered", v, u.Describe())
	}
	none := [1]int32{-1}
	up := uringRsrcUpdate2{offset: 1, data: uint64(uintptr(unsafe.Pointer(&none[0]))), nr: 1}
	for _, r := range u.rings {
		if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uringRegisterFilesUpdate2, uintptr(unsafe.Pointer(&up)), unsafe.Sizeof(up), 0, 0); e != 0 {
			t.Fatalf("clear entry 1: %v", e)
		}
	}
	if r := submitWait(t, d, c, Request{Op: OpRead, Offset: 1<<18 + 512, Buf: buf[:512]}); !errors.Is(r.err, unix.EBADF) {
		t.Errorf("read of segment 1 after its entry was cleared: got %v, want EBADF", r.err)
	}
}

// openTwoRings opens a uring device of two rings with 256 KiB segments.
func openTwoRings(t *testing.T) (Device, *uringDevice, *collector) {
	c := newCollector(16)
	d := openTest(t, Config{Backend: BackendUring, IOContexts: 2, SegmentBytes: 256 << 10, SectorSize: 512, OnComplete: c.onComplete})
	return d, d.(*uringDevice), c
}
