package device

import (
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
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
	link     []atomic.Uint32               // link[i]: slot+1 below slot i in its queue (0: bottom)
	warmSink atomic.Uint32                 // see warm
	wg       sync.WaitGroup
}

// memQueue is one completion goroutine's queue: a lock-free stack of slot
// indexes threaded through memDevice.link, which submitters push onto and
// the goroutine takes whole with one swap. A goroutine that finds it empty
// parks on wake after saying so in sleeping; a submitter wakes it only
// then, so a busy device costs one compare-and-swap per request and no
// channel operation.
//
// Why stacks taken whole rather than channels (what they replaced): a
// channel send and receive per request, each taking the channel's lock
// from both CPUs, cost 0.35 of the 1.31 CPU µs per op the benchmark spent
// (lock2, unlock2, procyield in the profile), more than the copy.
type memQueue struct {
	top      atomic.Uint64 // slot+1 of the top entry, 0 when empty
	sleeping atomic.Bool   // the goroutine is parked, or about to park, on wake
	wake     chan struct{} // capacity 1; closed by Close
	_        [40]byte      // keep queues' hot words off each other's cache line
}

var _ Device = (*memDevice)(nil)

func openLocalMemory(cfg Config) (*memDevice, error) {
	d := &memDevice{core: newCore(cfg, cfg.ThrottleLimit)}
	empty := []*memSegment{}
	d.segments.Store(&empty)
	if cfg.InlineCompletion {
		return d, nil
	}
	d.link = make([]atomic.Uint32, cfg.ThrottleLimit)
	d.queues = make([]*memQueue, cfg.CompletionThreads)
	for i := range d.queues {
		d.queues[i] = &memQueue{wake: make(chan struct{}, 1)}
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

// Submit implements Device.
func (d *memDevice) Submit(reqs []Request) (int, error) {
	if d.cfg.InlineCompletion {
		return d.submitInline(reqs)
	}
	for i := range reqs {
		r := &reqs[i]
		if err := d.check(r); err != nil {
			return i, err
		}
		idx, _ := d.acquire(true)
		if d.closed.Load() {
			d.release(idx)
			return i, ErrClosed
		}
		d.fill(idx, r)
		// The slot number picks the queue: slots come and go in no
		// particular order, so this spreads requests without a shared
		// round-robin counter for both CPUs to write.
		d.enqueue(d.queues[idx%uint32(len(d.queues))], idx)
	}
	return len(reqs), nil
}

// enqueue pushes slot idx onto q and wakes q's goroutine if it sleeps.
func (d *memDevice) enqueue(q *memQueue, idx uint32) {
	for {
		top := q.top.Load()
		d.link[idx].Store(uint32(top))
		if q.top.CompareAndSwap(top, uint64(idx)+1) {
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
	d.warm(reqs)
	for i := range reqs {
		r := &reqs[i]
		if err := d.check(r); err != nil {
			return i, err
		}
		got, err := d.transfer(r.Op, r.Offset, r.Buf)
		if err == nil {
			got, err = outcome(r.Op, r.Offset, len(r.Buf), int64(got))
		}
		d.cfg.OnComplete(r.UserData, got, err)
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
		top := q.top.Swap(0)
		if top == 0 {
			q.sleeping.Store(true)
			if q.top.Load() != 0 {
				q.sleeping.Store(false)
				continue
			}
			if _, open := <-q.wake; !open && q.top.Load() == 0 {
				return
			}
			q.sleeping.Store(false)
			continue
		}
		// The stack holds the newest request on top; deliver the oldest
		// first, as a queue would, by reversing the taken chain.
		var oldest uint64
		for top != 0 {
			i := uint32(top - 1)
			top = uint64(d.link[i].Load())
			d.link[i].Store(uint32(oldest))
			oldest = uint64(i) + 1
		}
		if d.link[oldest-1].Load() != 0 {
			d.warmChain(oldest)
		}
		for oldest != 0 {
			i := uint32(oldest - 1)
			oldest = uint64(d.link[i].Load())
			d.do(i)
		}
	}
}

// do performs the request in slot idx and completes it.
func (d *memDevice) do(idx uint32) {
	s := &d.slots[idx]
	s.published.Load()
	n, err := d.transfer(s.op, s.offset, s.buf)
	if err != nil {
		ud := s.userData
		d.release(idx)
		d.cfg.OnComplete(ud, 0, err)
		return
	}
	d.complete(idx, int64(n))
}

// warmBytes bounds how much of each read warm touches.
const warmBytes = 4096

// warm loads one byte of every cache line the reads of a batch will copy
// from, before any copy starts. The loads do not depend on each other, so
// the CPU keeps many of the misses outstanding at once, where the copies
// one after the other would each wait out a full memory latency: on the
// 1 GiB default file set the copy of a random 512 B block was 0.3 of the
// 0.38 CPU µs per op (memmove in the profile), a DRAM miss per block.
// The sum is kept in d.warmSink so that the loads are not optimised away.
func (d *memDevice) warm(reqs []Request) {
	if len(reqs) < 2 {
		return
	}
	segs := *d.segments.Load()
	var sum byte
	for i := range reqs {
		sum += d.touch(segs, reqs[i].Op, reqs[i].Offset, len(reqs[i].Buf))
	}
	d.warmSink.Add(uint32(sum))
}

// warmChain is warm for the chain of slots a completion goroutine took,
// oldest first.
func (d *memDevice) warmChain(oldest uint64) {
	segs := *d.segments.Load()
	var sum byte
	for oldest != 0 {
		i := uint32(oldest - 1)
		s := &d.slots[i]
		s.published.Load()
		sum += d.touch(segs, s.op, s.offset, len(s.buf))
		oldest = uint64(d.link[i].Load())
	}
	d.warmSink.Add(uint32(sum))
}

// touch loads one byte of each cache line of the first warmBytes of a read
// of n bytes at offset, and returns their sum.
func (d *memDevice) touch(segs []*memSegment, op Op, offset uint64, n int) (sum byte) {
	seg := offset / d.cfg.SegmentBytes
	if op != OpRead || seg >= uint64(len(segs)) || segs[seg] == nil {
		return 0
	}
	data := segs[seg].data
	off := offset % d.cfg.SegmentBytes
	end := min(off+uint64(min(n, warmBytes)), uint64(len(data)))
	for p := off; p < end; p += 64 {
		sum += data[p]
	}
	return sum
}

// transfer copies buf to or from the device at off and returns the bytes
// moved: a read past what was written gets what there is (0 when nothing),
// which the caller turns into ErrShortIO or ErrPastEnd.
func (d *memDevice) transfer(op Op, offset uint64, buf []byte) (int, error) {
	seg := offset / d.cfg.SegmentBytes
	off := offset % d.cfg.SegmentBytes
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

// Close implements Device.
func (d *memDevice) Close() error {
	if d.closed.Swap(true) {
		return ErrClosed
	}
	d.drain()
	for _, q := range d.queues {
		close(q.wake)
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
