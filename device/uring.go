package device

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// io_uring constants from <linux/io_uring.h>.
const (
	uringOffSQRing = 0x0
	uringOffCQRing = 0x8000000
	uringOffSQEs   = 0x10000000

	uringOpNop    = 0
	uringOpReadv  = 1
	uringOpWritev = 2
	uringOpRead   = 22 // IORING_OP_READ, kernel 5.6+
	uringOpWrite  = 23 // IORING_OP_WRITE

	// uringFeatRWCurPos came with kernel 5.6, as did IORING_OP_READ and
	// IORING_OP_WRITE: a ring without it gets READV/WRITEV instead.
	uringFeatRWCurPos = 1 << 3

	uringSetupCQSize = 1 << 3
	uringSetupClamp  = 1 << 4
	// uringSetupCoopTaskrun (IORING_SETUP_COOP_TASKRUN, kernel 5.19): a
	// completion does not interrupt the submitting thread with an IPI to
	// post its CQE; the thread posts it at its next entry into the kernel,
	// which a server's threads make all the time, and a sleeping thread is
	// still woken for it. The disk's interrupt lands on one CPU (here the
	// client's), and each completion batch then cost the server's CPU a
	// reschedule IPI. SINGLE_ISSUER and DEFER_TASKRUN are not used: the
	// kernel refuses (EEXIST) a submission from any thread but the ring's
	// first, and Go runs a submitting goroutine on whichever thread it
	// has.
	uringSetupCoopTaskrun = 1 << 8
	uringFeatSingleMmap   = 1 << 0
	uringEnterGetEvents   = 1 << 0
	uringRegisterEventfd  = 4     // IORING_REGISTER_EVENTFD, kernel 5.2+
	uringMaxSQEntries     = 1024  // our cap: a bigger batch just takes several io_uring_enter calls
	uringMaxCQEntries     = 65536 // the kernel's IORING_MAX_CQ_ENTRIES
	uringWakeUserData     = 1 << 63
	uringReapBatch        = 256
	uringEnterRetrySleep  = 50 * time.Microsecond
)

// uringDevice is the io_uring backend: io_uring_setup, the rings mapped with
// mmap, io_uring_enter once per batch, one OS-locked reaping goroutine per
// ring, no SQPOLL.
type uringDevice struct {
	*core
	files *segmentFiles
	rings []*uringRing
	next  atomic.Uint32
	stop  atomic.Bool
	wg    sync.WaitGroup
	sqN   uint32
	cqN   uint32
	// vectored is set on kernels older than 5.6: requests go as
	// READV/WRITEV with one iovec per slot, iovecs[slot], which lives as
	// long as the device (the kernel reads it at submission).
	vectored bool
	iovecs   []unix.Iovec
	fixed    uringFixed // registered buffers (uring_fixed.go)
}

// uringForceVectored makes openUring use READV/WRITEV even on a kernel
// with READ/WRITE, so that the tests cover the fallback.
var uringForceVectored = false

// uringSetupExtraFlags are OR-ed into io_uring_setup's flags. Always 0 but
// in a test that passes a flag the kernel does not know, to check that its
// EINVAL surfaces as a plain error, not as ErrKernelRefused.
var uringSetupExtraFlags uint32

// uringSubmitFlags are the io_uring_enter flags of a submission. GETEVENTS
// with min_complete 0 does not wait; it lets the kernel post the
// completions pending for this thread during the same syscall, as fio's
// io_uring engine does when it commits.
const uringSubmitFlags = uringEnterGetEvents

var _ Device = (*uringDevice)(nil)

func openUring(cfg Config) (*uringDevice, error) {
	limit := min(cfg.ThrottleLimit, uringMaxCQEntries)
	d := &uringDevice{core: newCore(cfg, limit, 1), files: newSegmentFiles(cfg.Dir)}
	// Any ring may be handed every request in flight, and the reaper
	// frees CQ space before it frees the slots, so a CQ as deep as the
	// throttle never overflows.
	sq := min(nextPow2(uint32(limit)), uringMaxSQEntries)
	cq := max(nextPow2(uint32(limit)), 2*sq)
	for range cfg.IOContexts {
		r, features, err := newUringRing(sq, cq)
		if err != nil {
			d.closeRings()
			return nil, err
		}
		d.rings = append(d.rings, r)
		if features&uringFeatRWCurPos == 0 || uringForceVectored {
			d.vectored = true
		}
	}
	if d.vectored {
		d.iovecs = make([]unix.Iovec, limit)
	}
	d.sqN, d.cqN = sq, cq
	d.setupFixed()
	d.setupFixedFiles()
	if err := d.files.openExisting(); err != nil {
		d.closeRings()
		return nil, err
	}
	for _, r := range d.rings {
		r.posted = func(uintptr) bool {
			return atomic.LoadUint32(r.cqTail) != atomic.LoadUint32(r.cqHead) || d.stop.Load()
		}
		d.wg.Add(1)
		go d.reap(r)
	}
	return d, nil
}

func (d *uringDevice) closeRings() {
	for _, r := range d.rings {
		r.close()
	}
	d.rings = nil
}

func (d *uringDevice) dir() string { return d.files.dir }

// Describe reports the rings the device really got.
func (d *uringDevice) Describe() string {
	ops := "READ/WRITE"
	if d.vectored {
		ops = "READV/WRITEV"
	}
	if len(d.rings) > 0 && d.rings[0].coop {
		ops += ", COOP_TASKRUN"
	}
	return fmt.Sprintf("uring: %d rings (SQ %d, CQ %d entries), %d reaping goroutines, throttle %d, sector %d B, %s, %s, no SQPOLL",
		len(d.rings), d.sqN, d.cqN, len(d.rings), len(d.slots), d.sector, ops, d.describeFixed())
}

// Submit implements Device: one io_uring_enter per batch of up to the SQ
// size; none at all when called from a completion function, whose
// submissions the reaper sends (see queueState).
func (d *uringDevice) Submit(reqs []Request) (int, error) {
	if !d.enter() {
		return 0, ErrClosed
	}
	defer d.leave()
	return submitOnQueues(d.core, d.rings, &d.next, reqs, d.submitBatch)
}

// submitBatch fills SQEs for a prefix of reqs and, unless defer is set and
// the SQ has room left, submits everything published with one
// io_uring_enter. It mirrors io_uring_get_sqe (per request) followed by
// io_uring_submit. The caller holds r.mu.
//
// first is a slot already acquired for reqs[0], which has passed check; it
// is used or released.
func (d *uringDevice) submitBatch(r *uringRing, reqs []Request, deferred bool, first uint32) (int, error) {
	// io_uring_get_sqe: acquire load of the kernel's SQ head, so the SQEs
	// it has consumed may be overwritten.
	head := atomic.LoadUint32(r.sqHead)
	tail := *r.sqTail // only holders of r.mu write the SQ tail
	if tail-head >= r.sqEntries {
		// Full of deferred submissions: hand them over to make room.
		if err := d.flush(r, tail); err != nil {
			d.release(first)
			return 0, err
		}
		head = atomic.LoadUint32(r.sqHead)
	}
	start := tail
	var err error
	for k := range reqs {
		if tail-head >= r.sqEntries {
			deferred = false // full: the kernel must take them now
			break
		}
		idx, fd, ok, cerr := d.claim(d.files, reqs, k, first)
		if !ok {
			err = cerr
			break
		}
		q := &reqs[k]
		sqe := &r.sqes[tail&r.sqMask]
		// Whole-SQE zeroing: a stale field from the SQE's previous use
		// (op_flags, addr3, buf_index) would change the meaning of this one.
		*sqe = uringSQE{
			opcode:   uringOpRead,
			fd:       fd,
			off:      q.Offset % d.cfg.SegmentBytes,
			addr:     uint64(uintptr(unsafe.Pointer(&q.Buf[0]))),
			len:      uint32(len(q.Buf)),
			userData: uint64(idx),
		}
		if q.Op == OpWrite {
			sqe.opcode = uringOpWrite
		}
		d.fixedFile(sqe, q.Offset/d.cfg.SegmentBytes, fd)
		if q.Fixed != 0 && !d.vectored {
			// A registered buffer (RegisterBuffer): its pages are pinned
			// already.
			sqe.opcode, sqe.bufIndex = uringOpReadFixed, q.Fixed-1
			if q.Op == OpWrite {
				sqe.opcode = uringOpWriteFixed
			}
		}
		if d.vectored {
			iov := &d.iovecs[idx]
			iov.Base = &q.Buf[0]
			iov.SetLen(len(q.Buf))
			sqe.opcode = uringOpReadv
			if q.Op == OpWrite {
				sqe.opcode = uringOpWritev
			}
			sqe.addr = uint64(uintptr(unsafe.Pointer(iov)))
			sqe.len = 1
		}
		tail++
	}
	// Release store (__io_uring_flush_sq): the SQE contents written above
	// become visible to the kernel no later than the new tail.
	atomic.StoreUint32(r.sqTail, tail)
	if deferred && err == nil {
		d.deferredBatches.Add(1)
		r.deferredN += int(tail - start)
		return int(tail - start), nil
	}
	if serr := d.flush(r, start); serr != nil {
		n := int(*r.sqTail - start)
		return max(n, 0), serr
	}
	return int(tail - start), err
}

// flush has the kernel consume every published SQE, mirroring the
// io_uring_enter of io_uring_submit. The caller holds r.mu, so nobody else
// publishes meanwhile, and without SQPOLL the kernel reads the SQ only
// inside io_uring_enter: on a fatal error the unconsumed SQEs can be taken
// back. Those from start on belong to the caller's Submit: their slots are
// freed and flush returns the error (the SQ tail then says how many were
// consumed). Those before start were deferred submissions already accepted:
// they get their completion, with the error, from a new goroutine (the
// caller holds r.mu, which a completion function may need).
func (d *uringDevice) flush(r *uringRing, start uint32) error {
	tail := *r.sqTail
	for retries := 0; ; {
		head := atomic.LoadUint32(r.sqHead)
		if head == tail {
			return nil
		}
		_, e := r.enter(tail-head, 0, uringSubmitFlags)
		switch {
		case e == 0:
			retries = 0
			continue
		case (e == unix.EAGAIN || e == unix.EBUSY || e == unix.EINTR) && retries < submitRetries:
			retries++
			if retries > 10 {
				time.Sleep(uringEnterRetrySleep)
			} else {
				runtime.Gosched()
			}
			continue
		}
		head = atomic.LoadUint32(r.sqHead)
		first := &r.sqes[head&r.sqMask]
		err := fmt.Errorf("device: io_uring_enter submitting a %d-byte read or write at file offset %d: %w", first.len, first.off, e)
		var orphans []uint32
		for t := head; t != tail; t++ {
			idx := uint32(r.sqes[t&r.sqMask].userData)
			if int32(t-start) < 0 {
				orphans = append(orphans, idx)
			} else {
				d.release(idx)
			}
		}
		if int32(head-start) > 0 {
			start = head
		}
		atomic.StoreUint32(r.sqTail, start)
		if len(orphans) > 0 {
			go func() {
				for _, idx := range orphans {
					d.complete(idx, -int64(e))
				}
			}()
		}
		return err
	}
}

// wake submits a NOP whose completion gets the reaper out of its wait.
// The caller holds r.mu.
func (d *uringDevice) wake(r *uringRing) error {
	head := atomic.LoadUint32(r.sqHead)
	tail := *r.sqTail
	if tail-head >= r.sqEntries {
		return fmt.Errorf("device: io_uring SQ full while waking the reaper")
	}
	r.sqes[tail&r.sqMask] = uringSQE{opcode: uringOpNop, userData: uringWakeUserData}
	atomic.StoreUint32(r.sqTail, tail+1)
	if err := d.flush(r, tail); err != nil {
		return fmt.Errorf("device: waking the io_uring reaper: %w", err)
	}
	return nil
}

// reap is the completion goroutine of ring r: it takes the CQEs posted,
// delivers them locked to its thread (see queueState), and when there are
// none waits on the ring's doorbell.
func (d *uringDevice) reap(r *uringRing) {
	defer d.wg.Done()
	var batch [uringReapBatch]uringDone
	for {
		r.cq.Lock()
		n := r.take(batch[:])
		r.cq.Unlock()
		if n == 0 {
			if d.stop.Load() {
				return
			}
			// io_uring_wait_cqe, but in the netpoller.
			if err := r.bell.waitUntil(r.posted); err != nil {
				time.Sleep(time.Millisecond) // only a bug gets here; do not spin
			}
			continue
		}
		d.warmDone(batch[:n])
		limit := d.reapSubmitLimit()
		r.beginDelivery()
		group := 0
		for _, c := range batch[:n] {
			if c.userData == uringWakeUserData {
				continue
			}
			d.complete(uint32(c.userData), int64(c.res))
			afterCompletion(d.core, r, &group, limit, d.sendDeferred)
		}
		d.afterGroup()
		d.sendDeferred(r)
		r.endDelivery()
	}
}

// completeTaken delivers a taken batch outside the reaper (no deferred
// submissions: see Poller and IdleSubmitter) and returns how many requests
// it completed; the wake-up NOP is no request.
func (d *uringDevice) completeTaken(batch []uringDone) int {
	n := 0
	for _, c := range batch {
		if c.userData != uringWakeUserData {
			d.complete(uint32(c.userData), int64(c.res))
			n++
		}
	}
	return n
}

// warmDone starts loading the slots of a taken batch (core.warm).
func (d *uringDevice) warmDone(batch []uringDone) {
	d.warm(len(batch), func(i int) (uint32, bool) {
		return uint32(batch[i].userData), batch[i].userData != uringWakeUserData
	})
}

// sendDeferred hands the kernel, in one io_uring_enter, what completion
// functions submitted (see reapSubmitEvery). An error here has already been
// delivered to the requests it concerns. Only the reaper calls it.
func (d *uringDevice) sendDeferred(r *uringRing) {
	r.mu.Lock()
	if n := *r.sqTail - atomic.LoadUint32(r.sqHead); n != 0 {
		d.noteDeferredRun(int(n))
		d.flush(r, *r.sqTail)
	}
	r.deferredN = 0
	r.mu.Unlock()
}

// Close implements Device.
func (d *uringDevice) Close() error {
	if !d.shut() {
		return ErrClosed
	}
	d.drain()
	d.stop.Store(true)
	var first error
	for _, r := range d.rings {
		r.mu.Lock()
		if err := d.wake(r); err != nil && first == nil {
			first = err
		}
		r.mu.Unlock()
	}
	d.wg.Wait()
	// Under the table's lock: a late UnregisterBuffer must not reach a ring
	// fd number that is closed, and maybe reused by another file.
	d.fixed.mu.Lock()
	d.closeRings()
	d.fixed.mu.Unlock()
	if err := d.files.closeAll(); err != nil && first == nil {
		first = err
	}
	return first
}
