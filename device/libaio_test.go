package device

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestIocbLayout checks struct iocb and io_event against the offsets of
// <linux/aio_abi.h> on a little-endian machine.
func TestIocbLayout(t *testing.T) {
	var cb iocb
	var ev ioEvent
	tests := []struct {
		field     string
		got, want uintptr
	}{
		{"aio_data", unsafe.Offsetof(cb.data), 0},
		{"aio_lio_opcode", unsafe.Offsetof(cb.opcode), 16},
		{"aio_reqprio", unsafe.Offsetof(cb.reqprio), 18},
		{"aio_fildes", unsafe.Offsetof(cb.fildes), 20},
		{"aio_buf", unsafe.Offsetof(cb.buf), 24},
		{"aio_nbytes", unsafe.Offsetof(cb.nbytes), 32},
		{"aio_offset", unsafe.Offsetof(cb.offset), 40},
		{"aio_reserved2", unsafe.Offsetof(cb.reserved2), 48},
		{"aio_flags", unsafe.Offsetof(cb.flags), 56},
		{"aio_resfd", unsafe.Offsetof(cb.resfd), 60},
		{"sizeof iocb", unsafe.Sizeof(cb), 64},
		{"io_event.res", unsafe.Offsetof(ev.res), 16},
		{"sizeof io_event", unsafe.Sizeof(ev), 32},
	}
	if littleEndian() {
		tests = append(tests,
			struct {
				field     string
				got, want uintptr
			}{"aio_key", unsafe.Offsetof(cb.key), 8},
			struct {
				field     string
				got, want uintptr
			}{"aio_rw_flags", unsafe.Offsetof(cb.rwFlags), 12})
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got offset %d, want %d", tt.field, tt.got, tt.want)
		}
	}
	if iocbCmdPread != 0 || iocbCmdPwrite != 1 {
		t.Errorf("opcodes: got PREAD %d PWRITE %d, want 0 and 1", iocbCmdPread, iocbCmdPwrite)
	}
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

func TestAIOEventsNeeded(t *testing.T) {
	tests := []struct {
		cfg  Config
		want int
	}{
		{Config{}, CompletionThreadsFor(runtime.GOMAXPROCS(0)) * 4096},
		{Config{CompletionThreads: 2}, 2 * 4096},
		{Config{IOContexts: 8, ThrottleLimit: 1024}, 8 * 1024},
	}
	for _, tt := range tests {
		if got := AIOEventsNeeded(tt.cfg); got != tt.want {
			t.Errorf("AIOEventsNeeded(%+v): got %d, want %d", tt.cfg, got, tt.want)
		}
	}
}

// TestLibaioDepthReduced asks for more events than fs.aio-max-nr allows:
// the device must open with a smaller depth and a throttle that fits it, and
// say so.
func TestLibaioDepthReduced(t *testing.T) {
	maxNr, err := readProcInt("/proc/sys/fs/aio-max-nr")
	if err != nil {
		t.Fatalf("read fs.aio-max-nr: %v", err)
	}
	const contexts = 16
	limit := 2 * maxNr / contexts // twice what fits
	d := openTest(t, Config{Backend: BackendLibaio, IOContexts: contexts, ThrottleLimit: limit, OnComplete: func(uint64, int, error) {}})
	a := d.(*aioDevice)
	if len(a.ctxs) != contexts {
		t.Errorf("contexts: got %d, want %d", len(a.ctxs), contexts)
	}
	if a.depth*contexts > maxNr || a.depth < 1 {
		t.Errorf("depth: got %d × %d contexts, want it within fs.aio-max-nr %d", a.depth, contexts, maxNr)
	}
	if got := len(a.slots); got > a.depth {
		t.Errorf("throttle: got %d, want ≤ depth %d", got, a.depth)
	}
	if desc := a.Describe(); !strings.Contains(desc, "reduced") {
		t.Errorf("Describe: got %q, want it to say the depth was reduced", desc)
	}
}

// TestAioRingWatched: the kernel's completion ring carries the header we
// read, so the reaper waits on its doorbell without reading it; were the
// header not recognised, every wait would cost two more syscalls.
func TestAioRingWatched(t *testing.T) {
	d := openTest(t, Config{Backend: BackendLibaio, SegmentBytes: 1 << 20, SectorSize: 512, OnComplete: func(uint64, int, error) {}})
	for i, c := range d.(*aioDevice).ctxs {
		if c.posted == nil {
			t.Errorf("context %d: its ring's header was not recognised (magic %#x expected)", i, aioRingMagic)
		}
	}
}
