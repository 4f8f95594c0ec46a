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
// backends, with the IO done by memcpy on the completion goroutines. It
// makes no syscall per request, so it is the software ceiling of the layers
// above it.
type memDevice struct {
	*core
	mu       sync.Mutex                    // serialises segment creation
	segments atomic.Pointer[[]*memSegment] // copy-on-write table, indexed by segment number
	queues   []chan uint32                 // one per completion goroutine; each holds slot indexes
	next     atomic.Uint32                 // round-robin over queues
	wg       sync.WaitGroup
}

var _ Device = (*memDevice)(nil)

func openLocalMemory(cfg Config) (*memDevice, error) {
	d := &memDevice{core: newCore(cfg, cfg.ThrottleLimit)}
	empty := []*memSegment{}
	d.segments.Store(&empty)
	d.queues = make([]chan uint32, cfg.CompletionThreads)
	for i := range d.queues {
		// Capacity ThrottleLimit: a queue never holds more than the slots
		// in flight, so a send on it never blocks.
		d.queues[i] = make(chan uint32, cfg.ThrottleLimit)
		d.wg.Add(1)
		go d.serve(d.queues[i])
	}
	return d, nil
}

// Describe reports the shape of the device.
func (d *memDevice) Describe() string {
	return fmt.Sprintf("localmemory: %d completion goroutines, throttle %d, sector %d B",
		len(d.queues), len(d.slots), d.sector)
}

// Submit implements Device.
func (d *memDevice) Submit(reqs []Request) (int, error) {
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
		d.queues[d.next.Add(1)%uint32(len(d.queues))] <- idx
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

// serve is a completion goroutine: it performs each queued request and
// delivers its completion.
func (d *memDevice) serve(q chan uint32) {
	defer d.wg.Done()
	for idx := range q {
		d.do(idx)
	}
}

func (d *memDevice) do(idx uint32) {
	s := &d.slots[idx]
	seg := s.offset / d.cfg.SegmentBytes
	off := s.offset % d.cfg.SegmentBytes
	n := uint64(len(s.buf))
	if s.op == OpWrite {
		m, err := d.segment(seg, true)
		if err != nil {
			ud := s.userData
			d.release(idx)
			d.cfg.OnComplete(ud, 0, err)
			return
		}
		copy(m.data[off:off+n], s.buf)
		for end := off + n; ; {
			w := m.written.Load()
			if end <= w || m.written.CompareAndSwap(w, end) {
				break
			}
		}
		d.complete(idx, int64(n))
		return
	}
	m, _ := d.segment(seg, false)
	if m == nil {
		d.complete(idx, 0)
		return
	}
	w := m.written.Load()
	if off >= w {
		d.complete(idx, 0)
		return
	}
	got := copy(s.buf, m.data[off:min(off+n, w)])
	d.complete(idx, int64(got))
}

// Close implements Device.
func (d *memDevice) Close() error {
	if d.closed.Swap(true) {
		return ErrClosed
	}
	d.drain()
	for _, q := range d.queues {
		close(q)
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
