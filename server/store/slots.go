package store

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/cacheline"
	"github.com/tierbench/tierbench/internal/loghist"
)

// A session's pending-read slots: taken for a device read, filled by the
// device's completion, released once the result is delivered.

// pendingRead is one device read of a session. The session goroutine owns
// every field except n, err, next and completedAt, which the device's
// completion goroutine writes before pushing the slot on the session's
// completion stack. They are plain fields: the push (a CAS on the stack)
// and the session's pop (a Swap of it) order those writes before the
// session reads them, and the session writes them again only once it
// submits the slot anew. (Atomic stores here were XCHGs, each waiting for
// the slot's cache line, and they showed in a tiered server's profile.)
//
// Its fields are laid out by who touches them, one cache line each (the
// struct is 192 bytes and a chunk's slots start on a line, see
// TestSlotLayout): at thousands of reads in flight the slots are out of
// the cache when they complete, and every line a read touches is a miss.
//   - first line: what the completion writes, and what a GET reads back
//     at every step (token, addr);
//   - second: the window and key a GET aims and checks, and its submit
//     times;
//   - third: what only long keys, longer records, deferred reads and
//     upserts' existence checks use.
type pendingRead struct {
	n    int32  // bytes the device transferred
	next uint32 // next slot+1 on the completion stack
	err  error
	// When the completion was taken by the device's goroutine, in
	// loghist.Now nanoseconds; see ReadTimes.
	completedAt int64
	// armed is bumped by the session after it last wrote the fields it
	// reads and before it submits a check; the completion goroutine loads
	// it before reading them, which orders the two. settled says the
	// completion goroutine already counted the check (see settleNow).
	armed   atomic.Uint32
	settled atomic.Bool
	token   uint64
	addr    uint64 // address of the record being fetched; the window starts at its sector
	check   bool   // an upsert's existence check, settled inside the session
	// selfExpires: check: the upsert's own record has an expiry time.
	selfExpires bool
	// bigWindow: the window is big, not the slot's own part of its
	// chunk's buffer (which is computed, not kept, see Session.own).
	bigWindow bool
	timed     bool // the completion takes a clock reading (TimeReads)

	window []byte // where the device reads to: the slot's own buffer, or big
	// When the last Submit of this read began and returned.
	submitBegin, submitEnd int64
	// The key, copied: in keyIn when it fits (keyLen ≤ len(keyIn)), else
	// in keyLong (keyLen = keyIsLong). See key and setKey.
	keyLen uint8
	keyIn  [23]byte

	keyLong []byte
	big     []byte // a dedicated aligned buffer for a record that outgrows the slot's own
	want    uint64 // deferred: the record bytes to fetch at addr
	self    uint64 // check: the address of the upsert's own record
}

// keyIsLong is pendingRead.keyLen for a key kept in keyLong.
const keyIsLong = 255

// setKey copies key into the slot: into its second line when it fits, so
// that checking the record read against it touches no other line (the
// reference's 16-byte keys do), else into keyLong, reused across reads.
func (pr *pendingRead) setKey(key []byte) {
	if len(key) <= len(pr.keyIn) {
		pr.keyLen = uint8(copy(pr.keyIn[:], key))
		return
	}
	pr.keyLong = append(pr.keyLong[:0], key...)
	pr.keyLen = keyIsLong
}

// key is the key setKey copied, valid until the slot is aimed anew.
func (pr *pendingRead) key() []byte {
	if pr.keyLen == keyIsLong {
		return pr.keyLong
	}
	return pr.keyIn[:pr.keyLen]
}

// slotChunk is a block of pending slots with one aligned buffer behind them.
type slotChunk struct {
	// The padding puts slots on a cache line: the runtime allocates a chunk in
	// a block that starts on one (its size class is a multiple of 64
	// bytes) behind an 8-byte type header, as it does every object with
	// pointers over 512 bytes. TestSlotLayout checks real allocations.
	_     [64 - 8]byte
	slots [slotsPerChunk]pendingRead
	buf   []byte
	// fixed is buf's registration with the device (Request.Fixed), 0 when
	// it has none; it is released before buf is freed.
	fixed uint16
}

// bufferRegistrar is a device that can pin a buffer with the kernel once
// (the uring backend's registered buffers), so that reads into it skip
// pinning its pages per request.
type bufferRegistrar interface {
	RegisterBuffer(buf []byte) uint16
	UnregisterBuffer(fixed uint16)
}

// registerBuffer registers a session's slot buffer with the device if it
// can, returning Request.Fixed for reads into it (0: none).
func (st *Store) registerBuffer(buf []byte) uint16 {
	if r, ok := st.dev.(bufferRegistrar); ok {
		return r.RegisterBuffer(buf)
	}
	return 0
}

// fixedOf is Request.Fixed for slot i's read: its chunk's registration
// when the window is the slot's own part of the chunk's buffer.
func (s *Session) fixedOf(i uint32, pr *pendingRead) uint16 {
	if pr.bigWindow {
		return 0
	}
	return s.chunks[i/slotsPerChunk].Load().fixed
}

// slotBytes is the size of each slot's own read buffer: two sectors, at
// least 2 KiB, so a record of up to a sector always fits whatever its
// alignment.
func (st *Store) slotBytes() int { return int(max(2048, 2*st.sector)) }

func (s *Session) slotBytes() int { return s.st.slotBytes() }

func (s *Session) slot(i uint32) *pendingRead {
	return &s.chunks[i/slotsPerChunk].Load().slots[i%slotsPerChunk]
}

// warm starts loading the line of slot i (as completed takes it, with
// checkFlag) that its completion writes, and the one its delivery reads
// next. The sync slot is past the table, and has nothing to warm.
func (s *Session) warm(i uint32) {
	i &^= checkFlag
	if i/slotsPerChunk >= maxSlotChunks {
		return
	}
	c := s.chunks[i/slotsPerChunk].Load()
	if c == nil {
		return
	}
	pr := &c.slots[i%slotsPerChunk]
	cacheline.Prefetch(unsafe.Pointer(pr))
	// The second line: the session reads the window and key from it as
	// soon as it takes the completion.
	cacheline.Prefetch(unsafe.Pointer(&pr.window))
}

// takeSlot returns a free slot, growing the slot table by one chunk (one
// allocation per 64 slots, kept for the session's life) when none is free.
func (s *Session) takeSlot() (uint32, error) {
	if len(s.free) == 0 {
		if s.nChunks == maxSlotChunks {
			return 0, ErrTooMany
		}
		buf, err := s.st.chunkBufs.get()
		if err != nil {
			return 0, fmt.Errorf("store: allocate read buffers: %w", err)
		}
		c := &slotChunk{buf: buf, fixed: s.st.registerBuffer(buf)}
		base := uint32(s.nChunks * slotsPerChunk)
		s.chunks[s.nChunks].Store(c)
		s.nChunks++
		for i := slotsPerChunk - 1; i >= 0; i-- {
			s.free = append(s.free, base+uint32(i))
		}
	}
	i := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	s.warmed = max(s.warmed-1, 0)
	s.outstanding++
	return i, nil
}

func (s *Session) releaseSlot(i uint32) {
	pr := s.slot(i)
	s.freeBig(pr)
	pr.window = nil
	s.free = append(s.free, i)
	s.outstanding--
}

// completed runs on a device completion goroutine.
func (s *Session) completed(i uint32, n int, err error) {
	if i == syncSlot {
		if err != nil {
			e := new(error)
			*e = err
			s.syncErr.Store(e)
		}
		s.syncN.Store(int64(n))
		s.syncDone <- struct{}{}
		return
	}
	stack := &s.done
	if i&checkFlag != 0 {
		i &^= checkFlag
		stack = &s.checks
		if pr := s.slot(i); pr.armed.Load() != 0 && err == nil && n == len(pr.window) {
			pr.settled.Store(s.st.settleNow(pr))
		}
	}
	pr := s.slot(i)
	pr.err, pr.n, pr.completedAt = err, int32(n), 0
	if pr.timed {
		pr.completedAt = loghist.Now()
	}
	for {
		top := stack.Load()
		pr.next = uint32(top)
		if stack.CompareAndSwap(top, uint64(i)+1) {
			break
		}
	}
	// The push above comes before this load, and waitNotify stores
	// waiting before it looks at the stacks: one of the two sees the
	// other, so a session never sleeps on a completion it missed.
	if s.waiting.Load() {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// sectorStart is the device offset of the sector holding addr: where a
// read of the record at addr starts.
func (st *Store) sectorStart(addr uint64) uint64 { return addr &^ (st.sector - 1) }

// window computes the sector-aligned device window [start, end) that covers
// recordBytes from addr, clipped to addr's page (records never straddle
// pages, and pages never straddle segments).
func (s *Session) window(addr, recBytes uint64) (start, size uint64) {
	sec := s.st.sector
	start = s.st.sectorStart(addr)
	end := (addr + recBytes + sec - 1) &^ (sec - 1)
	l := s.st.log
	if pageEnd := (addr>>l.pageShift + 1) << l.pageShift; end > pageEnd {
		end = pageEnd
	}
	return start, end - start
}

// own is slot i's part of its chunk's aligned buffer, where its reads go
// unless the record outgrows it. It is computed rather than kept in the
// slot, so that aiming a read touches no line of the slot beyond the first
// two (see pendingRead).
func (s *Session) own(i uint32) []byte {
	sb := s.slotBytes()
	at := int(i%slotsPerChunk) * sb
	return s.chunks[i/slotsPerChunk].Load().buf[at : at+sb : at+sb]
}

// aim points slot i (pr) at the record at addr, expecting recBytes.
func (s *Session) aim(i uint32, pr *pendingRead, addr, recBytes uint64) error {
	_, size := s.window(addr, recBytes)
	s.freeBig(pr)
	if size <= uint64(s.slotBytes()) {
		pr.window = s.own(i)[:size]
	} else {
		big, err := device.AlignedBuffer(int(size))
		if err != nil {
			return fmt.Errorf("store: allocate a %d B read buffer: %w", size, err)
		}
		pr.big, pr.bigWindow = big, true
		pr.window = big
		s.bigBytes += int64(len(big))
	}
	pr.addr = addr
	return nil
}

// freeBig releases pr's own window, if it has one.
func (s *Session) freeBig(pr *pendingRead) {
	if pr.bigWindow {
		s.bigBytes -= int64(len(pr.big))
		device.FreeBuffer(pr.big)
		pr.big, pr.bigWindow = nil, false
	}
}

// SetReadBudget bounds the bytes of the windows of their own that this
// session's reads hold at once (records longer than a slot's buffer);
// n <= 0 lets one such read in flight at a time. Reads beyond the budget
// wait, in token order, for earlier ones to be delivered: none is refused,
// and with nothing in flight the first waiting read always goes. Each
// value delivered lowers the budget by its length, as the caller keeps
// it until it sets the budget again.
func (s *Session) SetReadBudget(n int64) { s.readBudget = n }

// aimRead aims slot i of a Read at the record at addr and queues it, or,
// when its window would take the session past its read budget, defers it
// (nothing is allocated until admitDeferred lets it go).
func (s *Session) aimRead(i uint32, pr *pendingRead, addr, recBytes uint64) error {
	_, size := s.window(addr, recBytes)
	if size > uint64(s.slotBytes()) && s.bigBytes > 0 && s.bigBytes+int64(size) > s.readBudget {
		s.freeBig(pr)
		pr.addr, pr.want = addr, recBytes
		// Keep deferred in token order: the caller's earliest reply is
		// the one it waits for.
		at, _ := slices.BinarySearchFunc(s.deferred, pr.token, func(j uint32, tok uint64) int {
			return cmp.Compare(s.slot(j).token, tok)
		})
		s.deferred = slices.Insert(s.deferred, at, i)
		return nil
	}
	if err := s.aim(i, pr, addr, recBytes); err != nil {
		return err
	}
	s.queued = append(s.queued, i)
	return nil
}

// admitDeferred queues the deferred reads the read budget now allows, the
// first of them whatever its size when no window of its own is in flight.
// A read whose window cannot be allocated is delivered to fn with the
// error; it returns how many were.
func (s *Session) admitDeferred(fn func(uint64, []byte, Status, error)) int {
	failed := 0
	for len(s.deferred) > 0 {
		i := s.deferred[0]
		pr := s.slot(i)
		_, size := s.window(pr.addr, pr.want)
		if s.bigBytes > 0 && s.bigBytes+int64(size) > s.readBudget {
			break
		}
		s.deferred = s.deferred[1:]
		if err := s.aim(i, pr, pr.addr, pr.want); err != nil {
			fn(pr.token, nil, NotFound, err)
			s.releaseSlot(i)
			failed++
			continue
		}
		s.queued = append(s.queued, i)
	}
	return failed
}

// CancelDeferred delivers every read waiting for the read budget to fn
// with ErrCanceled, without reading it: for a caller that will not use
// the results (its client is gone). Reads in flight complete as usual.
func (s *Session) CancelDeferred(fn func(uint64, []byte, Status, error)) {
	for _, i := range s.deferred {
		fn(s.slot(i).token, nil, NotFound, ErrCanceled)
		s.releaseSlot(i)
	}
	s.deferred = s.deferred[:0]
}
