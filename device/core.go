package device

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/cacheline"
)

// slot is the device-side state of one request in flight. The slot index
// travels through the kernel as the iocb's aio_data or the SQE's user_data,
// so a completion finds its request without a map or an allocation.
type slot struct {
	userData uint64
	offset   uint64
	// buf keeps the caller's buffer reachable while the kernel holds its
	// address as a plain integer.
	buf []byte
	op  Op
	// published is stored after the fields above are filled and loaded
	// before the completion reads them, in race-detector builds only. The
	// kernel already orders the two sides (the syscall that submits
	// happens before the one that reaps), but the race detector cannot see
	// through the kernel: this atomic pair states the same ordering in
	// terms it understands. Elsewhere it is left out: its store is an
	// XCHG, which waits for the slot's cache line the plain stores before
	// it would have left to the store buffer, which showed in a tiered
	// server's CPU samples.
	published atomic.Uint32
}

// core is the part every backend shares: validated config, the slot table
// that is also the throttle, and the in-flight accounting.
type core struct {
	cfg    Config
	sector uint64
	// segShift is log2 of SegmentBytes when that is a power of two (the
	// defaults), 0 otherwise: see segmentOf.
	segShift uint8

	slots []slot
	// free holds the indexes of unused slots. It has exactly ThrottleLimit
	// entries in all, so taking one is the throttle: a submitter blocks
	// while ThrottleLimit requests are in flight.
	free *slotPool

	inFlight    atomic.Int64
	maxInFlight atomic.Int64 // instrumentation: the highest inFlight seen
	closed      atomic.Bool
	// submitters counts the file backends' Submits under way (enter to
	// leave). Close waits for it to fall to zero once it has closed the
	// device (shut), so that no Submit still reads the queues, or writes
	// to a ring, that Close then tears down.
	submitters atomic.Int64
	// deferredBatches counts Submits made from a completion function whose
	// requests were left for the reaper to send (instrumentation).
	deferredBatches atomic.Int64
	// maxDeferredRun is the most deferred requests a reaper has handed to
	// the kernel in one call (instrumentation: reapSubmitEvery bounds it).
	maxDeferredRun atomic.Int64
}

// reapSubmitEvery is how many completions a reaper delivers before it
// hands the kernel what completion functions submitted (after calling
// Config.AfterGroup), even in the middle of a batch.
//
// Why not wait for the end of the batch: a device kept at a fixed queue
// depth settles into batches as deep as the queue (the test host's virtio
// disk does), and a batch submitted in one call is plugged in the block
// layer until its last request is built, so every request waits for the
// whole batch's completion work and submission before the disk sees it.
// Why not fewer: it was 4, tuned against fio submitting one read per call;
// against fio submitting and reaping in batches, much faster on a virtual
// machine, the device bench read far below fio, its CPU the limit at a
// system call per 4 requests (and a gettid per resubmit, see
// Config.AfterGroup). With the bench resubmitting per group, alternated
// with fio, groups of 8 read the least; 16 read the most on a slower disk,
// 32 on most shapes once the disk was faster. At a faster disk a call
// costs more of the CPU than the few microseconds a request waits for its
// group (docs/notes/2026-12-07-comment-figures.md has the figures). With
// more in flight the disk's queue stays full anyway, so the group grows to
// a sixteenth of what is in flight (reapSubmitLimit).
const reapSubmitEvery = 32

// reapSubmitLimit is the group size for a reaper's next batch: at least
// reapSubmitEvery, at most a sixteenth of the requests in flight held back.
func (c *core) reapSubmitLimit() int {
	return max(reapSubmitEvery, int(c.inFlight.Load()/16))
}

// noteDeferredRun records that a reaper handed n deferred requests to the
// kernel in one call.
func (c *core) noteDeferredRun(n int) {
	for {
		m := c.maxDeferredRun.Load()
		if int64(n) <= m || c.maxDeferredRun.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// afterGroup calls Config.AfterGroup, if set (see there).
func (c *core) afterGroup() {
	if c.cfg.AfterGroup != nil {
		c.cfg.AfterGroup()
	}
}

// newCore makes the shared part of a backend with limit slots, free on
// stacks free stacks (see slotPool).
func newCore(cfg Config, limit, stacks int) *core {
	c := &core{cfg: cfg, sector: uint64(cfg.SectorSize), slots: make([]slot, limit), free: newSlotPool(limit, stacks)}
	if cfg.SegmentBytes&(cfg.SegmentBytes-1) == 0 {
		c.segShift = uint8(bits.TrailingZeros64(cfg.SegmentBytes))
	}
	return c
}

// segmentOf splits offset into its segment's number and the offset within
// that segment. With a power-of-two segment size it shifts and masks: a
// 64-bit division by a value the compiler cannot see costs tens of cycles,
// and a localmemory request did five of them (check, then transfer).
func (c *core) segmentOf(offset uint64) (seg, within uint64) {
	if c.segShift != 0 {
		return offset >> c.segShift, offset & (c.cfg.SegmentBytes - 1)
	}
	return offset / c.cfg.SegmentBytes, offset % c.cfg.SegmentBytes
}

// check refuses a request that breaks the alignment or segment invariants,
// before anything reaches the kernel.
func (c *core) check(r *Request) error {
	if r.Op != OpRead && r.Op != OpWrite {
		return fmt.Errorf("device: request at offset %d has op %d, want read or write", r.Offset, r.Op)
	}
	n := uint64(len(r.Buf))
	if n == 0 {
		return fmt.Errorf("%w: empty buffer at offset %d", ErrUnaligned, r.Offset)
	}
	// The sector size is a power of two (withDefaults): a mask, not a
	// division.
	if (r.Offset|n|uint64(uintptr(unsafe.Pointer(&r.Buf[0]))))&(c.sector-1) != 0 {
		return fmt.Errorf("%w: offset %d, length %d, buffer address %#x, sector size %d",
			ErrUnaligned, r.Offset, n, uintptr(unsafe.Pointer(&r.Buf[0])), c.sector)
	}
	seg, within := c.segmentOf(r.Offset)
	if within+n > c.cfg.SegmentBytes || r.Offset+n < r.Offset {
		return fmt.Errorf("device: %d bytes at offset %d cross the end of segment %d (segments are %d bytes)",
			n, r.Offset, seg, c.cfg.SegmentBytes)
	}
	if seg >= maxSegmentFiles {
		return fmt.Errorf("%w: offset %d is in segment %d, beyond the last possible segment %d",
			ErrPastEnd, r.Offset, seg, maxSegmentFiles-1)
	}
	return nil
}

// enter begins a Submit on a file backend. It is false once the device is
// closed; otherwise the caller calls leave when it is done with the queues.
// The count goes up before closed is read, and shut sets closed before it
// reads the count: either the Submit sees closed, or shut waits for it.
func (c *core) enter() bool {
	c.submitters.Add(1)
	if c.closed.Load() {
		c.submitters.Add(-1)
		return false
	}
	return true
}

func (c *core) leave() { c.submitters.Add(-1) }

// shut closes a file backend to new Submits, releases those waiting for a
// slot (they return ErrClosed) and waits for the rest to return; their
// requests are then in flight, for drain. It is false when the device was
// already closed.
func (c *core) shut() bool {
	if c.closed.Swap(true) {
		return false
	}
	c.free.close()
	for c.submitters.Load() > 0 {
		time.Sleep(50 * time.Microsecond)
	}
	return true
}

// acquire takes a free slot, blocking while the throttle is full when wait
// is set. ok is false when no slot was free and wait is unset, or, with
// wait, when the device was closed meanwhile (shut).
func (c *core) acquire(wait bool) (idx uint32, ok bool) {
	if wait {
		if idx, ok = c.free.popWait(0); !ok {
			return 0, false
		}
	} else if idx, ok = c.free.pop(0); !ok {
		return 0, false
	}
	c.noteInFlight(c.inFlight.Add(1))
	return idx, true
}

// release returns a slot whose completion has been delivered (or whose
// request was never handed to the kernel).
func (c *core) release(idx uint32) {
	c.slots[idx].buf = nil
	c.inFlight.Add(-1)
	c.free.push(0, idx)
}

// noteInFlight raises the in-flight high-water mark to n. The common case,
// n not above it, is one load of a line that is rarely written.
func (c *core) noteInFlight(n int64) {
	for {
		m := c.maxInFlight.Load()
		if n <= m || c.maxInFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

// fill records req in slot idx.
func (c *core) fill(idx uint32, r *Request) {
	s := &c.slots[idx]
	s.userData, s.offset, s.buf, s.op = r.UserData, r.Offset, r.Buf, r.Op
	if raceEnabled {
		s.published.Store(1)
	}
}

// warm starts loading the state the completions of a reaped batch will
// touch: every request's slot first, then, through Config.Warm, what the
// caller keeps for it (which needs the slot's UserData, so the second pass
// finds the first's lines arriving). idx(i) is the slot of the batch's
// i-th completion, ok false for one that is not a request (uring's wake).
func (c *core) warm(n int, idx func(i int) (uint32, bool)) {
	for i := range n {
		if x, ok := idx(i); ok {
			cacheline.Prefetch(unsafe.Pointer(&c.slots[x]))
		}
	}
	if c.cfg.Warm == nil {
		return
	}
	for i := range n {
		if x, ok := idx(i); ok {
			c.cfg.Warm(c.reaped(x).userData)
		}
	}
}

// reaped is slot idx, which the kernel has returned: its fields are the
// submitter's, ordered before by the kernel (and, for the race detector,
// by published).
func (c *core) reaped(idx uint32) *slot {
	s := &c.slots[idx]
	if raceEnabled {
		s.published.Load()
	}
	return s
}

// complete turns a kernel result for slot idx into the caller's completion
// and releases the slot. res is bytes transferred, or a negative errno.
func (c *core) complete(idx uint32, res int64) {
	s := c.reaped(idx)
	n, err := outcome(s.op, s.offset, len(s.buf), res)
	ud := s.userData
	c.release(idx)
	c.cfg.OnComplete(ud, n, err)
}

// outcome turns the result res of an op of want bytes at offset (bytes
// transferred, or a negative errno) into what OnComplete receives.
func outcome(op Op, offset uint64, want int, res int64) (int, error) {
	switch {
	case res < 0:
		return 0, fmt.Errorf("device: %s of %d bytes at offset %d: %w", op, want, offset, errnoErr(-res))
	case res == 0 && op == OpRead:
		return 0, fmt.Errorf("%w: read of %d bytes at offset %d returned nothing", ErrPastEnd, want, offset)
	case res < int64(want):
		return int(res), fmt.Errorf("%w: %s of %d bytes at offset %d transferred %d", ErrShortIO, op, want, offset, res)
	}
	return int(res), nil
}

// SectorSize is the alignment unit of offsets, lengths and buffers.
func (c *core) SectorSize() int { return int(c.sector) }

// InFlight is the number of requests submitted and not yet completed.
func (c *core) InFlight() int { return int(c.inFlight.Load()) }

// drain waits until every accepted request has been completed. It is only
// called by Close, after closed is set, so no new request can start.
func (c *core) drain() {
	for c.inFlight.Load() > 0 {
		time.Sleep(100 * time.Microsecond)
	}
}

// String names an Op in errors.
func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

func errnoErr(e int64) error { return unix.Errno(e) }

// maxInFlightSeen is the highest in-flight count since Open (instrumentation
// for the tests and the benchmark: it must never exceed ThrottleLimit).
func (c *core) maxInFlightSeen() int64 { return c.maxInFlight.Load() }

func (c *core) deferredCount() int64 { return c.deferredBatches.Load() }

func (c *core) maxDeferredRunSeen() int64 { return c.maxDeferredRun.Load() }
