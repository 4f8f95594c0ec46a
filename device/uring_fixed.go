package device

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Registered buffers (IORING_REGISTER_BUFFERS2 with a sparse table, then
// IORING_REGISTER_BUFFERS_UPDATE per buffer, kernel 5.19+): a buffer a
// caller registers is pinned by the kernel once, and a request into it
// goes as IORING_OP_READ_FIXED / WRITE_FIXED, which skips pinning and
// unpinning its pages per request (get_user_pages was a visible share of
// the server's CPU per device GET in perf).
//
// Invariants: every ring of the device has the same table, and index i
// names the same buffer on each (a request may go to any ring). A buffer
// is unregistered before it is unmapped: the kernel holds the pages it
// pinned, so a fixed read into an address unmapped and mapped again would
// land in the old pages, out of the caller's sight. A request's Fixed
// names its buffer; the kernel refuses, with EFAULT, an address outside
// it.

// io_uring constants for registered buffers, from <linux/io_uring.h>.
const (
	uringOpReadFixed          = 4
	uringOpWriteFixed         = 5
	uringRegisterBuffers2     = 15     // IORING_REGISTER_BUFFERS2, kernel 5.13+
	uringRegisterBuffersUpd   = 16     // IORING_REGISTER_BUFFERS_UPDATE, kernel 5.13+
	uringRegisterFiles2       = 13     // IORING_REGISTER_FILES2, kernel 5.13+
	uringRegisterFilesUpdate2 = 14     // IORING_REGISTER_FILES_UPDATE2
	uringSQEFixedFile         = 1 << 0 // IOSQE_FIXED_FILE: sqe.fd is a table index
	uringRsrcRegisterSparse   = 1 << 0
	uringFixedTableMaxEntries = 1 << 14 // the kernel's IORING_MAX_REG_BUFFERS
)

// uringFixedTableEntries is the size of each ring's table of registered
// buffers: a store session registers one buffer per 64 pending reads, so
// this covers a few thousand busy connections; past it buffers go
// unregistered, and their reads take the plain path.
var uringFixedTableEntries = 4096

// uringFixedFileEntries is the size of each ring's table of registered
// files: segment n is entry n, so the first 1024 segments (1 TiB of 1 GiB
// segments) are read without the kernel looking their file up and
// counting a reference on it per request (fget showed in the server's CPU
// per device GET in perf); the segments past it take the plain path.
const uringFixedFileEntries = 1024

// uringRsrcRegister is struct io_uring_rsrc_register, 32 bytes.
type uringRsrcRegister struct {
	nr    uint32
	flags uint32
	resv2 uint64
	data  uint64
	tags  uint64
}

// uringRsrcUpdate2 is struct io_uring_rsrc_update2, 32 bytes.
type uringRsrcUpdate2 struct {
	offset uint32
	resv   uint32
	data   uint64
	tags   uint64
	nr     uint32
	resv2  uint32
}

var (
	_ [32 - unsafe.Sizeof(uringRsrcRegister{})]struct{}
	_ [unsafe.Sizeof(uringRsrcRegister{}) - 32]struct{}
	_ [32 - unsafe.Sizeof(uringRsrcUpdate2{})]struct{}
	_ [unsafe.Sizeof(uringRsrcUpdate2{}) - 32]struct{}
)

// uringFixed is a device's table of registered buffers. mu serialises
// registrations (rare: a store session registers a buffer per 64 reads it
// ever has pending); submissions never take it.
type uringFixed struct {
	mu   sync.Mutex
	free []uint16 // unused table indexes
	// refused is why the device has no table (the kernel's errno), nil
	// when it has one.
	refused error
	inUse   int

	// files[n] is 1 + the descriptor of segment n once it is entry n of
	// every ring's file table, -1 when the kernel refused it (never asked
	// again), 0 before its first request. Submitters load it; registerFile
	// stores it under mu.
	files        []atomic.Int32
	filesRefused error
}

// setupFixed gives every ring an empty table of registered buffers. A
// kernel without them (or a device on READV/WRITEV) leaves the table
// refused, and every request takes the plain path.
func (d *uringDevice) setupFixed() {
	if d.vectored {
		d.fixed.refused = fmt.Errorf("device: registered buffers need IORING_OP_READ (kernel 5.6+)")
		return
	}
	n := uringFixedTableEntries
	reg := uringRsrcRegister{nr: uint32(n), flags: uringRsrcRegisterSparse}
	for _, r := range d.rings {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uringRegisterBuffers2,
			uintptr(unsafe.Pointer(&reg)), unsafe.Sizeof(reg), 0, 0)
		if e != 0 {
			d.fixed.refused = fmt.Errorf("device: io_uring_register(IORING_REGISTER_BUFFERS2, sparse, %d entries): %w", n, e)
			return
		}
	}
	d.fixed.free = make([]uint16, 0, n)
	for i := n - 1; i >= 0; i-- {
		d.fixed.free = append(d.fixed.free, uint16(i))
	}
}

// RegisterBuffer registers buf, from AlignedBuffer, with the kernel, and
// returns the value of Request.Fixed for requests into it: 1 + its index
// in the table. It returns 0, and the buffer works as any other, when the
// kernel has no registered buffers, the table is full or the kernel
// refuses this one (memlock): registering is an optimisation, never a
// condition. UnregisterBuffer must be called before FreeBuffer(buf).
func (d *uringDevice) RegisterBuffer(buf []byte) uint16 {
	if len(buf) == 0 {
		return 0
	}
	d.fixed.mu.Lock()
	defer d.fixed.mu.Unlock()
	if d.fixed.refused != nil || len(d.fixed.free) == 0 || d.closed.Load() {
		return 0
	}
	idx := d.fixed.free[len(d.fixed.free)-1]
	iov := unix.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	for i, r := range d.rings {
		if err := r.updateFixed(idx, &iov); err != nil {
			for _, done := range d.rings[:i] {
				done.updateFixed(idx, &unix.Iovec{})
			}
			return 0
		}
	}
	d.fixed.free = d.fixed.free[:len(d.fixed.free)-1]
	d.fixed.inUse++
	return idx + 1
}

// UnregisterBuffer releases a registration made by RegisterBuffer (fixed
// 0 does nothing). No request into the buffer may be in flight.
func (d *uringDevice) UnregisterBuffer(fixed uint16) {
	if fixed == 0 {
		return
	}
	d.fixed.mu.Lock()
	defer d.fixed.mu.Unlock()
	if d.closed.Load() {
		return // the rings' tables go with the rings
	}
	idx := fixed - 1
	for _, r := range d.rings {
		r.updateFixed(idx, &unix.Iovec{})
	}
	d.fixed.free = append(d.fixed.free, idx)
	d.fixed.inUse--
}

// updateFixed sets entry idx of r's table to iov (an empty iovec clears it).
func (r *uringRing) updateFixed(idx uint16, iov *unix.Iovec) error {
	up := uringRsrcUpdate2{offset: uint32(idx), data: uint64(uintptr(unsafe.Pointer(iov))), nr: 1}
	_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uringRegisterBuffersUpd,
		uintptr(unsafe.Pointer(&up)), unsafe.Sizeof(up), 0, 0)
	runtime.KeepAlive(iov) // up holds its address as a plain integer
	if e != 0 {
		return fmt.Errorf("device: io_uring_register(IORING_REGISTER_BUFFERS_UPDATE, entry %d): %w", idx, e)
	}
	return nil
}

// describeFixed is Describe's part on registered buffers.
func (d *uringDevice) describeFixed() string {
	d.fixed.mu.Lock()
	defer d.fixed.mu.Unlock()
	files := fmt.Sprintf("registered files (the first %d segments)", uringFixedFileEntries)
	if d.fixed.filesRefused != nil {
		files = fmt.Sprintf("no registered files (%v)", d.fixed.filesRefused)
	}
	if d.fixed.refused != nil {
		return fmt.Sprintf("no registered buffers (%v), %s", d.fixed.refused, files)
	}
	return fmt.Sprintf("registered buffers (%d of %d in use), %s", d.fixed.inUse, uringFixedTableEntries, files)
}

// setupFixedFiles gives every ring an empty table of uringFixedFileEntries
// registered files, or leaves the files refused.
func (d *uringDevice) setupFixedFiles() {
	reg := uringRsrcRegister{nr: uringFixedFileEntries, flags: uringRsrcRegisterSparse}
	for _, r := range d.rings {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uringRegisterFiles2,
			uintptr(unsafe.Pointer(&reg)), unsafe.Sizeof(reg), 0, 0)
		if e != 0 {
			d.fixed.filesRefused = fmt.Errorf("device: io_uring_register(IORING_REGISTER_FILES2, sparse, %d entries): %w", reg.nr, e)
			return
		}
	}
	d.fixed.files = make([]atomic.Int32, uringFixedFileEntries)
}

// fixedFile sets sqe to name segment seg's file (descriptor fd) by its
// entry in the rings' file tables when it has one, registering it on its
// first request.
func (d *uringDevice) fixedFile(sqe *uringSQE, seg uint64, fd int32) {
	if seg >= uint64(len(d.fixed.files)) {
		return
	}
	f := &d.fixed.files[seg]
	v := f.Load()
	if v == 0 {
		v = d.registerFile(seg, fd)
	}
	if v == fd+1 {
		sqe.fd, sqe.flags = int32(seg), sqe.flags|uringSQEFixedFile
	}
}

// registerFile makes fd entry seg of every ring's file table and returns
// what it stored in files[seg].
func (d *uringDevice) registerFile(seg uint64, fd int32) int32 {
	d.fixed.mu.Lock()
	defer d.fixed.mu.Unlock()
	f := &d.fixed.files[seg]
	if v := f.Load(); v != 0 {
		return v
	}
	fds := [1]int32{fd}
	up := uringRsrcUpdate2{offset: uint32(seg), data: uint64(uintptr(unsafe.Pointer(&fds[0]))), nr: 1}
	for _, r := range d.rings {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uringRegisterFilesUpdate2,
			uintptr(unsafe.Pointer(&up)), unsafe.Sizeof(up), 0, 0)
		if e != 0 {
			// Rings that took it keep an entry nobody names: harmless.
			f.Store(-1)
			return -1
		}
	}
	runtime.KeepAlive(&fds)
	f.Store(fd + 1)
	return fd + 1
}
