package store

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tierbench/tierbench/device"
)

// beginAddress is where the log starts: 0 must never be a record address
// because it means "no previous record" in chains and "empty" in the index.
const beginAddress = 64

// Frame state word: (page+1) << frameShift | frameEvicting | reader count.
const (
	frameShift    = 32
	frameEvicting = 1 << 31
	frameReaders  = frameEvicting - 1
)

// frame is one in-memory page slot of the tiered log's ring.
type frame struct {
	buf     []byte        // PageBytes from device.AlignedBuffer; never changes, freed at Close
	state   atomic.Uint64 // see frameShift; changes only by CAS except when the evictor owns it
	writers atomic.Int64  // appenders still copying a record into the frame's current page
	_       [40]byte      // keep frames on separate cache lines
}

// hlog is the hybrid log: addresses, page frames, the allocator and the
// flusher that writes sealed pages to the device.
type hlog struct {
	pageBytes uint64
	pageMask  uint64
	pageShift uint
	tiered    bool

	frames []frame                // tiered: page p lives in frames[p % len(frames)]
	pages  []atomic.Pointer[byte] // untiered: page p's buffer, allocated on demand

	dev device.Device

	// The allocator. curPage is the page the tail is in; sealed is the
	// next page to hand to the flusher (pages below it were handed over).
	allocMu sync.Mutex
	curPage uint64
	sealed  uint64

	begin    atomic.Uint64 // addresses below are gone (FlushAll)
	head     atomic.Uint64 // addresses below are on the device only
	readOnly atomic.Uint64 // start of the tail page: everything below is sealed
	tail     atomic.Uint64 // next free address
	flushed  atomic.Uint64 // everything below is on the device

	flushCh     chan uint64 // sealed pages, in order; capacity len(frames)
	flushDone   chan error  // the device's completion of the one page write in flight
	flushMu     sync.Mutex
	flushCond   *sync.Cond
	flushErr    error // sticky, under flushMu
	flusherDone chan struct{}
}

func newLog(cfg Config, dev device.Device, flushDone chan error) (*hlog, error) {
	l := &hlog{
		pageBytes: uint64(cfg.PageBytes),
		pageMask:  uint64(cfg.PageBytes) - 1,
		tiered:    cfg.StorageTier,
		dev:       dev,
	}
	for 1<<l.pageShift < l.pageBytes {
		l.pageShift++
	}
	l.flushCond = sync.NewCond(&l.flushMu)
	l.begin.Store(beginAddress)
	l.tail.Store(beginAddress)
	if l.tiered {
		n := cfg.MemoryBytes / cfg.PageBytes
		l.frames = make([]frame, n)
		for i := range l.frames {
			buf, err := device.AlignedBuffer(int(l.pageBytes))
			if err != nil {
				l.free()
				return nil, fmt.Errorf("store: allocate log page %d of %d: %w", i, n, err)
			}
			l.frames[i].buf = buf
			l.frames[i].state.Store(uint64(i+1) << frameShift)
		}
		l.flushCh = make(chan uint64, n)
		l.flushDone = flushDone
		l.flusherDone = make(chan struct{})
		go l.flusher()
		return l, nil
	}
	// Untiered: a directory big enough for 1 TiB of log (at most 1 M pages).
	maxPages := min(max((1<<40)>>l.pageShift, 1024), 1<<20)
	l.pages = make([]atomic.Pointer[byte], maxPages)
	buf, err := device.AlignedBuffer(int(l.pageBytes))
	if err != nil {
		return nil, fmt.Errorf("store: allocate the first log page: %w", err)
	}
	l.pages[0].Store(&buf[0])
	return l, nil
}

// pin returns the in-memory page holding addr, with the frame to unpin, or
// ok false when the page has left memory (read it from the device). While
// pinned, the frame cannot be evicted or reused.
func (l *hlog) pin(addr uint64) (page []byte, f *frame, ok bool) {
	p := addr >> l.pageShift
	if !l.tiered {
		if p >= uint64(len(l.pages)) {
			return nil, nil, false
		}
		b := l.pages[p].Load()
		if b == nil {
			return nil, nil, false
		}
		return unsafe.Slice(b, l.pageBytes), nil, true
	}
	f = &l.frames[p%uint64(len(l.frames))]
	want := (p + 1) << frameShift
	for {
		s := f.state.Load()
		if s&^frameReaders != want || s&frameReaders == frameReaders {
			return nil, nil, false
		}
		if f.state.CompareAndSwap(s, s+1) {
			return f.buf, f, true
		}
	}
}

func (l *hlog) unpin(f *frame) {
	if f != nil {
		f.state.Add(^uint64(0))
	}
}

// allocate reserves size bytes at the tail for a record and returns its
// address and bytes. The caller writes the record and then calls
// doneWriting(f) before anything else that could wait.
func (l *hlog) allocate(size uint64) (addr uint64, rec []byte, f *frame, err error) {
	l.allocMu.Lock()
	t := l.tail.Load()
	if t>>l.pageShift != l.curPage || t&l.pageMask+size > l.pageBytes {
		if t>>l.pageShift == l.curPage && t&l.pageMask != 0 {
			// Mark the rest of the page unused for a log scan.
			storeWord0(l.page(l.curPage)[t&l.pageMask:], validBit|fillerBit)
		}
		q := l.curPage + 1
		if err := l.turnPage(q); err != nil {
			l.allocMu.Unlock()
			return 0, nil, nil, err
		}
		t = q << l.pageShift
	}
	page := l.page(l.curPage)
	off := t & l.pageMask
	if l.tiered {
		f = &l.frames[l.curPage%uint64(len(l.frames))]
		f.writers.Add(1)
		// Zero word 0 before the tail passes it: a log scan that loads
		// the tail and then a zero word 0 below it knows the record is not
		// written yet, and never mistakes a reused frame's stale bytes for
		// a header. A plain store: the atomic store of the tail orders it
		// before any scan's load of the word (only the final word 0 races
		// with scans). An untiered page needs none of it: it is fresh
		// anonymous memory, zero past the tail and never reused, and the
		// store would put the first touch of the record's cache line (a
		// miss) before the tail's and the latch's atomic instructions,
		// which wait for it.
		clear(page[off : off+8])
	}
	l.tail.Store(t + size)
	l.allocMu.Unlock()
	return t, page[off : off+size : off+size], f, nil
}

// page is the buffer of in-memory page p, which the caller knows is in
// memory (the tail's page, with allocMu held).
func (l *hlog) page(p uint64) []byte {
	if l.tiered {
		return l.frames[p%uint64(len(l.frames))].buf
	}
	return unsafe.Slice(l.pages[p].Load(), l.pageBytes)
}

func (l *hlog) doneWriting(f *frame) {
	if f != nil {
		f.writers.Add(-1)
	}
}

// turnPage moves the tail to page q, with allocMu held. Tiered, it hands the
// sealed pages to the flusher and, when q's frame still holds page
// q-len(frames), waits for that page to be on the device, moves HeadAddress
// past it, waits for its readers to leave and gives the frame to page q.
func (l *hlog) turnPage(q uint64) error {
	if (q+1)<<l.pageShift > maxAddress {
		return fmt.Errorf("%w at address %d", ErrLogFull, q<<l.pageShift)
	}
	if !l.tiered {
		if q >= uint64(len(l.pages)) {
			return fmt.Errorf("%w: the in-memory log holds at most %d pages of %d bytes; use --storage-tier", ErrLogFull, len(l.pages), l.pageBytes)
		}
		buf, err := device.AlignedBuffer(int(l.pageBytes))
		if err != nil {
			return fmt.Errorf("store: allocate log page %d: %w", q, err)
		}
		l.pages[q].Store(&buf[0])
		l.curPage = q
		l.readOnly.Store(q << l.pageShift)
		return nil
	}
	// At most len(frames) pages are ever unflushed, so this never blocks.
	for ; l.sealed < q; l.sealed++ {
		l.flushCh <- l.sealed
	}
	l.readOnly.Store(q << l.pageShift)
	n := uint64(len(l.frames))
	if q >= n {
		old := q - n
		if err := l.waitFlushed((old + 1) << l.pageShift); err != nil {
			return err
		}
		if l.head.Load() < (old+1)<<l.pageShift {
			l.head.Store((old + 1) << l.pageShift)
		}
		f := &l.frames[q%n]
		want := (old + 1) << frameShift
		for spins := 0; !f.state.CompareAndSwap(want, want|frameEvicting); spins++ {
			if spins > 16 {
				runtime.Gosched()
			}
		}
		f.state.Store((q + 1) << frameShift)
	}
	l.curPage = q
	return nil
}

func (l *hlog) waitFlushed(addr uint64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	for l.flushed.Load() < addr && l.flushErr == nil {
		l.flushCond.Wait()
	}
	return l.flushErr
}

// flusher writes sealed pages to the device in order, one at a time, once
// their last appender has finished copying.
func (l *hlog) flusher() {
	defer close(l.flusherDone)
	for p := range l.flushCh {
		f := &l.frames[p%uint64(len(l.frames))]
		for f.writers.Load() != 0 {
			runtime.Gosched()
		}
		err := l.writePage(p, f.buf)
		l.flushMu.Lock()
		if err != nil && l.flushErr == nil {
			l.flushErr = fmt.Errorf("store: write the log page at address %d to the device: %w", p<<l.pageShift, err)
		}
		if err == nil {
			l.flushed.Store((p + 1) << l.pageShift)
		}
		l.flushCond.Broadcast()
		l.flushMu.Unlock()
	}
}

func (l *hlog) writePage(p uint64, buf []byte) error {
	req := []device.Request{{Op: device.OpWrite, Offset: p << l.pageShift, Buf: buf, UserData: flushUserData}}
	if _, err := l.dev.Submit(req); err != nil {
		return err
	}
	return <-l.flushDone
}

// close stops the flusher; the caller closes the device, then calls free.
func (l *hlog) close() {
	if l.flushCh != nil {
		close(l.flushCh)
		<-l.flusherDone
	}
}

func (l *hlog) free() {
	for i := range l.frames {
		device.FreeBuffer(l.frames[i].buf)
		l.frames[i].buf = nil
	}
	for i := range l.pages {
		if b := l.pages[i].Load(); b != nil {
			device.FreeBuffer(unsafe.Slice(b, l.pageBytes))
			l.pages[i].Store(nil)
		}
	}
}
