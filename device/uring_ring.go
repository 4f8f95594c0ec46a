package device

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring instance itself: set up and mapped as liburing does it,
// entered, and its completions taken. uring.go is the device built on it.

// uringRing is one io_uring instance. The pointers point into memory the
// kernel shares with us (mmap of the ring fd, outside the Go heap).
//
// Ownership: the SQ side (sqTail, sqes, sqArray) belongs to whoever holds
// mu; the CQ side (cqHead, cqes) belongs to the ring's single reaping
// goroutine. The kernel owns *sqHead and *cqTail.
type uringRing struct {
	fd int

	sqHead, sqTail *uint32
	sqMask         uint32
	sqEntries      uint32
	sqArray        []uint32
	sqes           []uringSQE

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []uringCQE

	coop bool      // set up with COOP_TASKRUN
	maps [][]byte  // every mapping, for munmap
	bell *doorbell // registered as the ring's eventfd: rung as CQEs are posted
	// posted is the reaper's doorbell condition (doorbell.waitUntil): the
	// CQ holds a CQE, or the device is closing.
	posted func(uintptr) bool
	// cq is held by whoever takes CQEs and moves the CQ head: the reaper,
	// or an idle submitter waiting for its own completion (idle.go).
	cq sync.Mutex

	// queueState: the lock, the reaper's identity and its deferred count.
	// A request submitted from a completion function also completes on the
	// thread that submitted it, so the kernel's completion work (task_work)
	// runs on the thread already waiting on this ring instead of waking a
	// second one.
	queueState
}

func nextPow2(n uint32) uint32 {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len32(n-1)
}

// newUringRing mirrors liburing's io_uring_queue_init_params +
// io_uring_queue_mmap.
func newUringRing(sqEntries, cqEntries uint32) (*uringRing, uint32, error) {
	flags := uringSetupCQSize | uringSetupClamp | uringSetupExtraFlags
	p := uringParams{cqEntries: cqEntries, flags: flags | uringSetupCoopTaskrun}
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sqEntries), uintptr(unsafe.Pointer(&p)), 0)
	coop := e == 0
	if e == unix.EINVAL {
		// A kernel before 5.19 does not know COOP_TASKRUN: the ring
		// without it.
		p = uringParams{cqEntries: cqEntries, flags: flags}
		fd, _, e = unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sqEntries), uintptr(unsafe.Pointer(&p)), 0)
	}
	if e != 0 {
		return nil, 0, setupError(fmt.Sprintf("io_uring_setup(%d entries)", sqEntries), e, unix.ENOSYS, unix.EPERM)
	}
	r := &uringRing{fd: int(fd), coop: coop}
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	single := p.features&uringFeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	mmap := func(off int64, size int) ([]byte, error) {
		b, err := unix.Mmap(r.fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("device: mmap io_uring region %#x of %d bytes: %w", off, size, err)
		}
		r.maps = append(r.maps, b)
		return b, nil
	}
	sqRing, err := mmap(uringOffSQRing, sqSize)
	if err != nil {
		r.close()
		return nil, 0, err
	}
	cqRing := sqRing
	if !single {
		if cqRing, err = mmap(uringOffCQRing, cqSize); err != nil {
			r.close()
			return nil, 0, err
		}
	}
	sqeMem, err := mmap(uringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{})))
	if err != nil {
		r.close()
		return nil, 0, err
	}
	at := func(b []byte, off uint32) unsafe.Pointer { return unsafe.Pointer(&b[off]) }
	r.sqHead = (*uint32)(at(sqRing, p.sqOff.head))
	r.sqTail = (*uint32)(at(sqRing, p.sqOff.tail))
	r.sqMask = *(*uint32)(at(sqRing, p.sqOff.ringMask))
	r.sqEntries = *(*uint32)(at(sqRing, p.sqOff.ringEntries))
	r.sqArray = unsafe.Slice((*uint32)(at(sqRing, p.sqOff.array)), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(at(cqRing, p.cqOff.head))
	r.cqTail = (*uint32)(at(cqRing, p.cqOff.tail))
	r.cqMask = *(*uint32)(at(cqRing, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*uringCQE)(at(cqRing, p.cqOff.cqes)), p.cqEntries)
	// SQ slot i always holds SQE i, so the index array is filled once
	// (liburing does the same in io_uring_queue_mmap).
	for i := range r.sqArray {
		r.sqArray[i] = uint32(i)
	}
	if r.bell, err = newDoorbell(); err != nil {
		r.close()
		return nil, 0, err
	}
	efd := int32(r.bell.fd)
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uringRegisterEventfd, uintptr(unsafe.Pointer(&efd)), 1, 0, 0); e != 0 {
		r.close()
		return nil, 0, setupError("io_uring_register(IORING_REGISTER_EVENTFD)", e, unix.ENOSYS, unix.EPERM)
	}
	return r, p.features, nil
}

// close unmaps the rings and closes the ring fd, mirroring
// io_uring_queue_exit.
func (r *uringRing) close() {
	for _, b := range r.maps {
		unix.Munmap(b)
	}
	r.maps = nil
	unix.Close(r.fd)
	if r.bell != nil {
		r.bell.close()
	}
}

// enter is the io_uring_enter syscall, made without telling the Go
// scheduler (RawSyscall): we only ever call it with min_complete 0, so it
// never waits for a completion. It is CPU work on our behalf, like the code
// around it, with one exception: a read the block layer has no request for
// is slept on in the submitter's thread (blk_mq_get_tag, io_schedule), not
// handed to io-wq, although io_uring issues it with IOCB_NOWAIT: seen on
// ext4 over a virtio disk on 6.18 (in perf, with more reads asked for than
// the disk's queue has requests), as liburing issue 826 reports for ext4
// and xfs on 6.8. The sleep holds this thread's P, and it is harmless: it
// happens only while the disk's queue is full, so the disk runs at its best
// and a GET completes only as fast as it does. Keeping what we hand the
// kernel near the queue's size does not pay: a throttle at or just above
// the queue's size read fewer GETs than the default, and was not cheaper
// per GET beyond the noise.
//
// Why: a batch of 256 reads keeps the thread in io_uring_enter far longer
// than the runtime's monitor waits. Made as an ordinary syscall, the
// monitor retakes the P after 20 µs and starts another thread to run the
// other goroutines, and the submitter, back from the kernel without a P,
// parks its thread: on a server given one CPU that was two thread switches
// per batch and the monitor waking every 20 µs, a large share of the
// server's CPU in perf (docs/notes/2026-12-07-comment-figures.md has the
// figures).
func (r *uringRing) enter(toSubmit, minComplete, flags uint32) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), 0, 0)
	return int(n), e
}

// uringDone is a CQE as a reaper keeps it, copied out of the CQ.
type uringDone struct {
	userData uint64
	res      int32
}

// take copies up to len(batch) CQEs out of r's CQ and hands their space
// back to the kernel, mirroring io_uring_peek_batch_cqe and
// io_uring_cq_advance. The caller holds r.cq.
func (r *uringRing) take(batch []uringDone) int {
	// Acquire load of the kernel's CQ tail: the CQEs before it are fully
	// written when we read them.
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for ; head != tail && n < len(batch); head++ {
		c := &r.cqes[head&r.cqMask]
		batch[n] = uringDone{c.userData, c.res}
		n++
	}
	// Release store of the CQ head. It comes before the completions free
	// their slots, so in-flight requests plus unreaped CQEs never exceed
	// the CQ size.
	atomic.StoreUint32(r.cqHead, head)
	return n
}
