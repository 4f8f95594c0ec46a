package device

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/cacheline"
)

// memSegment is one segment of the localmemory device: an anonymous mapping
// of SegmentBytes reserved at the first write (pages are committed by the
// kernel only when touched) and the high-water mark of what was written,
// which plays the part of a file's size.
type memSegment struct {
	data    []byte
	written atomic.Uint64
}

// memDevice is the localmemory backend: the same contract as the file
// backends, with the IO done by memcpy. It makes no syscall per request, so
// it is the software ceiling of the layers above it.
//
// By default requests go to CompletionThreads goroutines that copy and
// complete them, each fed by its own lock-free queue (memQueue). With
// Config.InlineCompletion, Submit does the copy itself and calls OnComplete
// before it returns, on the submitter's goroutine: no slot, no queue, no
// hand-off (see submitInline).
type memDevice struct {
	*core
	mu       sync.Mutex                    // serialises segment creation
	segments atomic.Pointer[[]*memSegment] // copy-on-write table, indexed by segment number
	queues   []*memQueue                   // one per completion goroutine
	// link[i] is slot+1 below slot i in its queue (0: bottom). Plain
	// words: a chain is written before the swap that pushes it and read
	// after the swap that takes it, and those order it.
	link []uint32
	// stop tells the completion goroutines, once Close holds every slot,
	// to return when they next wake.
	stop atomic.Bool
	wg   sync.WaitGroup
}

// memQueue is one completion goroutine's queue: a lock-free stack of slot
// indexes threaded through memDevice.link, which submitters push a batch
// onto at once and the goroutine takes whole with one swap. A goroutine
// that finds it empty parks on wake after saying so in sleeping; a
// submitter wakes it only then, and once per batch, so a busy device costs
// one compare-and-swap per batch and no channel operation.
//
// A batch costs the hand-off a few atomic read-modify-writes, not three
// per request: a pop of its slots per memGroup requests (popUpTo), the
// compare-and-swap that pushes its chain (which also counts it, see top)
// and a push of the slots back per group (pushAll). The count of waiting
// requests and the guard that keeps Close from stopping a goroutine under
// a Submit used to be two more counters, three updates per Submit; Close
// now waits for the slots instead (see Close).
//
// Each queue has its own stack of free slots (slotPool stack k), which its
// goroutine returns slots to and its submitters take them from: a
// request's slot, its queue entry and its completion stay with one pair of
// goroutines instead of crossing between the CPUs on every request.
//
// Why stacks taken whole rather than channels (what they replaced): a
// channel send and receive per request, each taking the channel's lock
// from both CPUs, cost more of the benchmark's CPU per op than the copy
// itself (lock2, unlock2, procyield in the profile).
type memQueue struct {
	// top is the stack: slot+1 of its top entry in the low 32 bits (0:
	// empty) and the number of requests on it in the high 32 bits, so the
	// swap that pushes a chain counts it and the one that takes the stack
	// zeroes the count (see InFlight). The count is at most the throttle
	// limit, 2²⁰.
	top      atomic.Uint64
	sleeping atomic.Bool   // the goroutine is parked, or about to park, on wake
	k        int           // this queue's number, and its free-slot stack's
	wake     chan struct{} // capacity 1; never closed (see Close)
	_        [32]byte      // keep queues' hot words off each other's cache line
}

// topCountShift is where memQueue.top keeps its count.
const topCountShift = 32

var _ Device = (*memDevice)(nil)

func openLocalMemory(cfg Config) (*memDevice, error) {
	stacks := 1
	if !cfg.InlineCompletion {
		stacks = cfg.CompletionThreads
	}
	d := &memDevice{core: newCore(cfg, cfg.ThrottleLimit, stacks)}
	empty := []*memSegment{}
	d.segments.Store(&empty)
	if cfg.InlineCompletion {
		return d, nil
	}
	d.link = make([]uint32, cfg.ThrottleLimit)
	d.queues = make([]*memQueue, cfg.CompletionThreads)
	for i := range d.queues {
		d.queues[i] = &memQueue{k: i, wake: make(chan struct{}, 1)}
		d.wg.Add(1)
		go d.serve(d.queues[i])
	}
	return d, nil
}

// Describe reports the shape of the device.
func (d *memDevice) Describe() string {
	if d.cfg.InlineCompletion {
		return fmt.Sprintf("localmemory: inline completion (on the submitter), sector %d B", d.sector)
	}
	return fmt.Sprintf("localmemory: %d completion goroutines, throttle %d, sector %d B",
		len(d.queues), len(d.slots), d.sector)
}

// InFlight implements Device. With completion goroutines it is the
// requests waiting in the queues, summed queue by queue: the requests a
// goroutine has taken leave the count as it takes them, with the swap that
// takes them, so that the count costs no atomic operation of its own.
func (d *memDevice) InFlight() int {
	if d.cfg.InlineCompletion {
		return d.core.InFlight()
	}
	return int(d.pendingSum())
}

// pendingSum is the requests waiting in all the queues.
func (d *memDevice) pendingSum() int64 {
	var n int64
	for _, q := range d.queues {
		n += int64(q.top.Load() >> topCountShift)
	}
	return n
}

// Submit implements Device. The whole batch goes to one queue, the
// submitter's (see queueOf), as one chain pushed with one compare-and-swap,
// and wakes that queue's goroutine at most once.
func (d *memDevice) Submit(reqs []Request) (int, error) {
	if d.cfg.InlineCompletion {
		return d.submitInline(reqs)
	}
	if len(reqs) == 0 {
		return 0, nil
	}
	q := d.queueOf(reqs[0].UserData)
	// No request reaches a queue after Close has stopped its goroutine:
	// Close takes every slot first, so a Submit either holds a slot, and
	// Close waits for its request's completion, or finds none and learns
	// from popWait that the device is closed.
	if d.closed.Load() {
		return 0, ErrClosed
	}
	var first, last uint32 // slot+1 of the chain's oldest and newest request, 0: none yet
	held := 0              // requests in the chain
	// Slots are taken memGroup at a time, with one swap: a swap per
	// request was a full barrier per request, each waiting for the stores
	// into the slot before it, whose line the completion goroutine's CPU
	// had just written.
	var taken [memGroup]uint32
	have, used := 0, 0
	for i := range reqs {
		r := &reqs[i]
		if err := d.check(r); err != nil {
			d.free.pushAll(q.k, taken[used:have])
			d.push(q, first, last, held)
			return i, err
		}
		if used == have {
			used, have = 0, d.free.popUpTo(q.k, taken[:min(len(reqs)-i, memGroup)])
			if have == 0 {
				// The throttle is full: hand over what is held before
				// waiting, or the wait could be for these very requests.
				d.push(q, first, last, held)
				first, held = 0, 0
				idx, ok := d.free.popWait(q.k)
				if !ok {
					return i, ErrClosed
				}
				taken[0], have = idx, 1
			}
		}
		idx := taken[used]
		used++
		// The fields need no publishing of their own (core.fill's): the
		// swap that pushes the chain orders them before the one that
		// takes it.
		s := &d.slots[idx]
		s.userData, s.offset, s.buf, s.op = r.UserData, r.Offset, r.Buf, r.Op
		// The chain is threaded oldest first from the bottom: each
		// request's link names the one submitted before it, the order
		// serve expects of a stack.
		d.link[idx] = last
		if first == 0 {
			first = idx + 1
		}
		last = idx + 1
		held++
	}
	d.push(q, first, last, held)
	return len(reqs), nil
}

// queueOf is the queue of a submitter: callers keep their own id in the
// upper half of UserData (the store its session, the benchmark its worker),
// so each submitter's requests meet one completion goroutine, and the
// completion goroutine that resubmits from OnComplete finds its own queue,
// which needs no wake-up.
//
// The id is taken modulo the queue count with a 32-bit division (ids are
// 32 bits), or a mask for a power of two (the default 2 or 4 goroutines):
// a 64-bit division costs tens of cycles, more than the rest of queueOf.
func (d *memDevice) queueOf(userData uint64) *memQueue {
	id, n := uint32(userData>>32), uint32(len(d.queues))
	if n&(n-1) == 0 {
		return d.queues[id&(n-1)]
	}
	return d.queues[id%n]
}

// push puts the chain of n slots from first (its oldest, whose link is
// still to be set) to last (its newest) onto q in one swap, and wakes q's
// goroutine if it sleeps. An empty chain (first 0) does nothing.
func (d *memDevice) push(q *memQueue, first, last uint32, n int) {
	if first == 0 {
		return
	}
	for {
		top := q.top.Load()
		d.link[first-1] = uint32(top)
		if q.top.CompareAndSwap(top, (top>>topCountShift+uint64(n))<<topCountShift|uint64(last)) {
			break
		}
	}
	// sleeping is read after the push and written before the goroutine's
	// last look at top: one of the two sees the other.
	if q.sleeping.Load() && q.sleeping.CompareAndSwap(true, false) {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// submitInline is Submit with Config.InlineCompletion: each request is
// copied and completed on the caller's goroutine before Submit returns. A
// batch counts as in flight until then, so Close, which waits for the
// in-flight count to reach zero before unmapping, never pulls a segment
// from under a copy.
func (d *memDevice) submitInline(reqs []Request) (int, error) {
	n := int64(len(reqs))
	d.noteInFlight(d.inFlight.Add(n))
	defer d.inFlight.Add(-n)
	if d.closed.Load() {
		return 0, ErrClosed
	}
	segs := *d.segments.Load()
	var lines [memGroup * memReadLines]uintptr
	for start := 0; start < len(reqs); start += memGroup {
		group := reqs[start:min(start+memGroup, len(reqs))]
		nl := 0
		for i := range group {
			nl += d.sourceLines(segs, group[i].Op, group[i].Offset, len(group[i].Buf), lines[nl:nl+memReadLines])
		}
		cacheline.PrefetchAll(lines[:nl])
		for i := range group {
			r := &group[i]
			if err := d.check(r); err != nil {
				return start + i, err
			}
			got, err := d.perform(r.Op, r.Offset, r.Buf)
			d.cfg.OnComplete(r.UserData, got, err)
		}
	}
	return len(reqs), nil
}

// segment returns segment n, creating it when create is set; nil when it
// does not exist and create is unset.
func (d *memDevice) segment(n uint64, create bool) (*memSegment, error) {
	if segs := *d.segments.Load(); n < uint64(len(segs)) && segs[n] != nil {
		return segs[n], nil
	}
	if !create {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	segs := *d.segments.Load()
	if n < uint64(len(segs)) && segs[n] != nil {
		return segs[n], nil
	}
	data, err := unix.Mmap(-1, 0, int(d.cfg.SegmentBytes), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("device: reserve %d bytes for memory segment %d: %w", d.cfg.SegmentBytes, n, err)
	}
	// Random sector reads over a large mapping miss the TLB on almost every
	// access with 4 KiB pages; transparent huge pages cut that cost, which
	// is part of what a software ceiling should not pay. Advisory only.
	_ = unix.Madvise(data, unix.MADV_HUGEPAGE)
	grown := make([]*memSegment, max(uint64(len(segs)), n+1))
	copy(grown, segs)
	grown[n] = &memSegment{data: data}
	d.segments.Store(&grown)
	return grown[n], nil
}

// serve is a completion goroutine: it takes its queue whole, performs each
// request and delivers its completion, and parks when the queue is empty.
func (d *memDevice) serve(q *memQueue) {
	defer d.wg.Done()
	for {
		taken := q.top.Swap(0)
		top := uint64(uint32(taken))
		if top == 0 {
			q.sleeping.Store(true)
			if q.top.Load() != 0 {
				q.sleeping.Store(false)
				continue
			}
			<-q.wake
			if d.stop.Load() && q.top.Load() == 0 {
				return
			}
			q.sleeping.Store(false)
			continue
		}
		d.serveTaken(q, taken)
	}
}

// serveTaken performs and delivers the requests of q's stack as one swap
// took it (taken: its top and count), oldest first, and returns how many
// there were.
func (d *memDevice) serveTaken(q *memQueue, taken uint64) int {
	top := uint64(uint32(taken))
	if top == 0 {
		return 0
	}
	// Instrumentation, once per batch: the in-flight high-water mark,
	// this batch included.
	d.noteInFlight(d.pendingSum() + int64(taken>>topCountShift))
	// The stack holds the newest request on top; deliver the oldest
	// first, as a queue would, by reversing the taken chain.
	var oldest uint64
	for top != 0 {
		i := uint32(top - 1)
		top = uint64(d.link[i])
		d.link[i] = uint32(oldest)
		oldest = uint64(i) + 1
	}
	segs := *d.segments.Load()
	var group [memGroup]uint32
	var done [memGroup]memDone
	var lines [memGroup * memReadLines]uintptr
	for oldest != 0 {
		g, nl := 0, 0
		for ; oldest != 0 && g < memGroup; g++ {
			i := uint32(oldest - 1)
			oldest = uint64(d.link[i])
			group[g] = i
			s := &d.slots[i]
			nl += d.sourceLines(segs, s.op, s.offset, len(s.buf), lines[nl:nl+memReadLines])
		}
		cacheline.PrefetchAll(lines[:nl])
		for j, i := range group[:g] {
			s := &d.slots[i]
			n, err := d.perform(s.op, s.offset, s.buf)
			done[j] = memDone{userData: s.userData, n: n, err: err}
			s.buf = nil
		}
		d.free.pushAll(q.k, group[:g])
		for _, c := range done[:g] {
			d.cfg.OnComplete(c.userData, c.n, c.err)
		}
	}
	d.afterGroup()
	return int(taken >> topCountShift)
}

// memGroup is how many requests of a taken chain serveTaken performs at a
// time: it starts loading the source lines of all of them, copies them,
// returns their slots with one swap and then delivers their completions.
//
// Why in groups (a profile of the tiered server on localmemory): returning
// each slot with its own swap right after its copy was a large share of
// the server's CPU, nearly all of it on the instruction after the swap, a
// full barrier that waits for the copy's stores into a buffer whose lines
// the submitter's CPU holds; one swap per group lets those stores overlap.
// And the source lines loaded by plain loads ahead of the copies, another
// large share, stalled retirement as the misses queued; issued as
// prefetches, a group's misses overlap without holding the loop up
// (docs/notes/2026-12-07-comment-figures.md has the figures).
const memGroup = 64

// memReadLines is how many lines of each read the group's prefetch starts:
// a 512 B sector's; the processor's own prefetcher follows a longer copy.
const memReadLines = 8

// memDone is a performed request's completion, kept until its group's
// slots are returned.
type memDone struct {
	userData uint64
	n        int
	err      error
}

// sourceLines writes into dst the addresses of the first len(dst) lines a
// read of n bytes at offset copies from, and returns how many it wrote:
// none for a write or a segment not in segs.
func (d *memDevice) sourceLines(segs []*memSegment, op Op, offset uint64, n int, dst []uintptr) int {
	seg, off := d.segmentOf(offset)
	if op != OpRead || seg >= uint64(len(segs)) || segs[seg] == nil {
		return 0
	}
	data := segs[seg].data
	end := min(off+uint64(min(n, len(dst)*cacheline.Bytes)), uint64(len(data)))
	k := 0
	for p := off; p < end; p += cacheline.Bytes {
		dst[k] = uintptr(unsafe.Pointer(&data[p]))
		k++
	}
	return k
}

// perform does one request and says how it ended, as OnComplete takes it.
func (d *memDevice) perform(op Op, offset uint64, buf []byte) (int, error) {
	n, err := d.transfer(op, offset, buf)
	if err != nil {
		return n, err
	}
	return outcome(op, offset, len(buf), int64(n))
}

// transfer copies buf to or from the device at off and returns the bytes
// moved: a read past what was written gets what there is (0 when nothing),
// which the caller turns into ErrShortIO or ErrPastEnd.
func (d *memDevice) transfer(op Op, offset uint64, buf []byte) (int, error) {
	seg, off := d.segmentOf(offset)
	n := uint64(len(buf))
	if op == OpWrite {
		m, err := d.segment(seg, true)
		if err != nil {
			return 0, err
		}
		copy(m.data[off:off+n], buf)
		for end := off + n; ; {
			w := m.written.Load()
			if end <= w || m.written.CompareAndSwap(w, end) {
				break
			}
		}
		return int(n), nil
	}
	m, _ := d.segment(seg, false)
	if m == nil {
		return 0, nil
	}
	w := m.written.Load()
	if off >= w {
		return 0, nil
	}
	return copy(buf, m.data[off:min(off+n, w)]), nil
}

// Close implements Device. With completion goroutines it takes every slot
// out of the free pool, waiting for the requests that hold one to be
// completed, then stops the goroutines: their queues are empty, and no
// request can be pushed after, since pushing one takes a slot (a Submit
// that finds none learns from popWait that the device is closed). A
// completion function may still be running when its slot is back; the
// goroutine that runs it is waited for before the segments are unmapped.
//
// The goroutines are stopped by stop and a wake-up, not by closing their
// wake channels: a Submit's push may still be between its swap and its
// wake-up when its request has been served and its slot taken back by
// Close, and that wake-up on a closed channel was a panic (a fresh-clone
// CI run of TestCloseWhileSubmitting hit it).
func (d *memDevice) Close() error {
	if d.closed.Swap(true) {
		return ErrClosed
	}
	if d.cfg.InlineCompletion {
		d.drain()
	} else {
		d.free.close()
		d.free.takeAll(len(d.slots))
	}
	d.stop.Store(true)
	for _, q := range d.queues {
		select {
		case q.wake <- struct{}{}:
		default: // a wake-up is already waiting for the goroutine
		}
	}
	d.wg.Wait()
	var first error
	for _, m := range *d.segments.Load() {
		if m == nil {
			continue
		}
		if err := unix.Munmap(m.data); err != nil && first == nil {
			first = fmt.Errorf("device: unmap memory segment: %w", err)
		}
	}
	return first
}
