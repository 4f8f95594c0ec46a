package device

import (
	"strings"
	"testing"
	"unsafe"
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
	reqs := make([]Request, 8)
	for i := range reqs {
		reqs[i] = Request{Op: OpRead, Offset: uint64(i*29+3) * 512, Buf: buf[i*1024 : i*1024+1024], UserData: uint64(i)}
	}
	if n, err := d.Submit(reqs); n != len(reqs) || err != nil {
		t.Fatalf("Submit: got (%d, %v)", n, err)
	}
	for range reqs {
		r := c.wait(t)
		q := reqs[r.userData]
		if r.err != nil || r.n != 1024 || firstMismatch(q.Buf, q.Offset) >= 0 {
			t.Errorf("vectored read at %d: got (n %d, %v, mismatch at %d)", q.Offset, r.n, r.err, firstMismatch(q.Buf, q.Offset))
		}
	}
	// The last sector of the segment, right at the end of the file.
	if r := submitWait(t, d, c, Request{Op: OpRead, Offset: 256<<10 - 512, Buf: buf[:512]}); r.err != nil {
		t.Errorf("last sector: %v", r.err)
	}
}
