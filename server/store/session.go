package store

import (
	"bytes"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/cacheline"
	"github.com/tierbench/tierbench/internal/loghist"
)

// Status is the outcome of a Read.
type Status uint8

const (
	// Found: the key is live and its value was returned.
	Found Status = iota
	// NotFound: the key was never written, or was deleted.
	NotFound
	// Pending: the record is on the device; its result arrives through
	// CompletePending with the token given to Read.
	Pending
)

func (s Status) String() string {
	switch s {
	case Found:
		return "Found"
	case NotFound:
		return "NotFound"
	case Pending:
		return "Pending"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

const (
	slotsPerChunk = 64
	maxSlotChunks = 1024 // 65536 pending reads per session
	syncSlot      = math.MaxUint32
	// checkFlag marks, in a request's UserData, a read that settles whether
	// an upsert's key was live before it (slot numbers stay below 1<<16).
	checkFlag = 1 << 31
	// maxChecks bounds a session's existence checks in flight.
	maxChecks = 256
	// defaultValueGuess is the value length a session assumes for its first
	// device read: the reference's 96 B values make 128 B records, one
	// sector. Afterwards it assumes the last value length it saw.
	defaultValueGuess = 96
)

// Session is one goroutine's handle on the store: it owns read buffers and
// pending slots so that the hot paths do not allocate. It is not safe for
// concurrent use.
type Session struct {
	st *Store
	id uint32

	chunks      [maxSlotChunks]atomic.Pointer[slotChunk]
	nChunks     int
	free        []uint32 // free slot numbers
	queued      []uint32 // slots waiting for the next Submit
	reqs        []device.Request
	outstanding int // slots in use: queued, in flight or being delivered
	// timeReads: Reads from now on record when they complete (TimeReads).
	timeReads bool
	// warmed: how many slots from the top of free PrefetchKey has noted
	// since CompleteAtLeast last ran.
	warmed int
	// prefetch: the addresses of the lines PrefetchKey noted, for the
	// next Prefetch.
	prefetch []uintptr
	// rcHashes: with a read cache, the hashes of the keys PrefetchKey
	// noted, whose cache lines the next Prefetch loads in a second pass.
	rcHashes []uint64

	done   atomic.Uint64 // completion stack of reads: slot+1 of the top, 0 when empty
	notify chan struct{} // capacity 1: a completion arrived while the session waited
	// waiting is set while the session is about to block on notify; a
	// completion sends on notify only then, so the common case (the
	// session busy, or completing inline inside its own Submit) costs an
	// atomic load instead of a channel operation per read.
	waiting atomic.Bool

	// Existence checks of upserts: queued, then submitted at once; their
	// completions come on their own stack so that any operation of the
	// session can settle them without a caller's delivery function.
	checks      atomic.Uint64
	checkQueued []uint32
	checkReqs   []device.Request
	checking    int // check slots outstanding

	// One synchronous device read at a time, for writers.
	syncBuf  []byte
	syncReq  [1]device.Request
	syncN    atomic.Int64
	syncErr  atomic.Pointer[error]
	syncDone chan struct{}
	scanBuf  []byte // a log scan's device window (see Scan)
	// scanWin is the part of scanBuf the last device window filled, at
	// device offset scanStart; nil when scanBuf holds nothing valid.
	scanWin   []byte
	scanStart uint64

	valueGuess uint64
	// Reads whose record needs a window of its own (longer than a slot's
	// buffer) hold bigBytes of such windows at once, at most readBudget
	// unless only one is in flight; the others wait in deferred, in token
	// order (see aimRead).
	readBudget int64
	bigBytes   int64
	deferred   []uint32
	keyA, keyB []byte   // scratch keys of records read by address (expiry, Lookup)
	due        []uint64 // expiry schedule entries being handled
	sweepShard int      // the schedule shard expireDue starts with
	mem        []byte   // scratch for values found in memory during completion
	old        []byte   // RMW: the current value
	next       []byte   // RMW: the new value
	closed     bool

	// lastRead: the times of the read delivered last (see LastRead);
	// takenAt: when CompleteAtLeast last took completions off s.done.
	lastRead ReadTimes
	takenAt  int64

	// clockHeld: between HoldClock and ReleaseClock the session reads the
	// clock once, into clockMillis (0 until then).
	clockHeld   bool
	clockMillis int64
}

func newSession(st *Store) *Session {
	return &Session{
		st:         st,
		notify:     make(chan struct{}, 1),
		syncDone:   make(chan struct{}, 1),
		valueGuess: defaultValueGuess,
		readBudget: math.MaxInt64,
		free:       make([]uint32, 0, slotsPerChunk),
		queued:     make([]uint32, 0, slotsPerChunk),
		reqs:       make([]device.Request, 0, slotsPerChunk),
	}
}

// memOutcome says what a record in memory turned out to be.
type memOutcome uint8

const (
	memMatch memOutcome = iota // the key's record (check tombstone)
	memOther                   // another key's record: follow prev
	memGone                    // the page left memory: read the device
)

// inMemory inspects the record at addr if its page is still in memory,
// decoding its header into *h and appending its value to dst[:0] when the
// key matches. h is the caller's (not a result) so that the header is
// written and read field by field in one frame, never copied whole.
func (s *Session) inMemory(addr uint64, key, dst []byte, h *header) (value []byte, out memOutcome, err error) {
	l := s.st.log
	page, f, ok := l.pin(addr)
	if !ok {
		return dst, memGone, nil
	}
	defer l.unpin(f)
	off := addr & l.pageMask
	h.decode(page[off:])
	if !l.fits(addr, h) {
		return dst, memOther, l.misfit(addr, h.keyBytes, h.valueBytes)
	}
	h.readExpiry(page[off:])
	k := off + h.metaBytes()
	if !bytes.Equal(page[k:k+h.keyBytes], key) {
		return dst, memOther, nil
	}
	if !h.tombstone {
		v := k + h.keyBytes
		dst = append(dst[:0], page[v:v+h.valueBytes]...)
	}
	return dst, memMatch, nil
}

// Read looks key up. A record in memory is answered at once: its value is
// appended to dst[:0] and returned with Found, or NotFound. A record below
// HeadAddress becomes a queued device read and Read returns Pending; the
// result is delivered with token by CompletePending, which submits every
// read queued since the last call in one batch. A key whose expiry time has
// passed is NotFound, and Read (or CompletePending) reclaims it: it writes
// its tombstone and counts it out of Stats.Keys.
func (s *Session) Read(key, dst []byte, token uint64) ([]byte, Status, error) {
	st := s.st
	if s.closed || st.closed.Load() {
		return nil, NotFound, ErrClosed
	}
	s.pumpChecks()
	h := st.hash(key)
	begin := st.log.begin.Load()
	addr := st.ix.find(h, begin)
	for addr >= begin {
		var hd header
		v, out := dst, memGone
		if addr >= st.log.head.Load() {
			var err error
			if v, out, err = s.inMemory(addr, key, dst, &hd); err != nil {
				return nil, NotFound, err
			}
		}
		if out == memGone && st.rc != nil {
			v, out = st.rc.lookup(addr, key, dst, &hd)
		}
		switch out {
		case memMatch:
			if hd.tombstone {
				return nil, NotFound, nil
			}
			if s.expired(&hd) {
				return nil, NotFound, s.reclaim(key, h, addr)
			}
			return v, Found, nil
		case memOther:
			addr = hd.prev
			continue
		}
		if st.dev == nil {
			return nil, NotFound, fmt.Errorf("%w: address %d is not in memory and there is no storage tier", errCorrupt, addr)
		}
		i, err := s.takeSlot()
		if err != nil {
			return nil, NotFound, err
		}
		pr := s.slot(i)
		pr.token, pr.timed = token, s.timeReads
		pr.setKey(key)
		if err := s.aimRead(i, pr, addr, recordBytes(uint64(len(key)), s.valueGuess, false)); err != nil {
			s.releaseSlot(i)
			return nil, NotFound, err
		}
		return nil, Pending, nil
	}
	return nil, NotFound, nil
}

// ReadTimes are the moments of a device read's life, in loghist.Now
// nanoseconds: its Submit began and returned, the device's completion
// goroutine took its completion (Completed), and the session's goroutine
// took it in turn (Taken): Taken − Completed is the wake-up hand-off. Taken
// is one clock reading for every completion the session took together,
// not one per delivery: the results are the session's from that moment,
// and a reading per GET was a tenth of what timing a device GET cost.
type ReadTimes struct {
	SubmitBegin, SubmitEnd, Completed, Taken int64
}

// TimeReads says whether the device reads of the Reads that follow record
// the moment their completion is taken (ReadTimes.Completed), a clock
// reading on the device's goroutine per read; without it Completed is 0.
// A new session does not.
func (s *Session) TimeReads(on bool) { s.timeReads = on }

// LastRead is the ReadTimes of the read CompletePending delivered last:
// called from its delivery function, those of the result being delivered.
// Zero before any device read.
func (s *Session) LastRead() ReadTimes { return s.lastRead }

// PrefetchKey notes the lines that a Read of key is about to touch first;
// Prefetch starts loading every line noted since it last ran. A caller
// that knows the keys it is about to Read (the GETs of a pipelined batch)
// notes them all, then prefetches: each bucket is a random line of a big
// index, a memory miss the processor otherwise takes one GET at a time
// ((*index).find was a large share of the server's CPU per device GET in a
// profile, nearly all of it the load of the bucket's first word), and the
// lines are loaded in a loop of their own (see cacheline.PrefetchAll): a
// prefetch issued after each key's hashing cost a good part of the miss
// it was to hide (docs/notes/2026-12-07-comment-figures.md has the
// figures).
//
// It also notes the slot that the next Read going to the device would
// take, the i-th call since the last CompleteAtLeast the i-th slot from
// the top of the free stack: at many reads in flight a slot is cold by the
// time it is taken again, and aiming it stalled on its lines.
//
// With a read cache, Prefetch then takes a second pass over the keys: the
// buckets loading, it finds each key's newest record in its bucket and,
// where that record is on the device, prefetches the lines of the cache's
// set that a lookup of it touches first (its state and directory), and in
// a third pass, those lines loading, finds each record in its set (under
// the set's latch) and prefetches the record's first two lines. A GET the
// cache serves otherwise takes three misses one after another (the set's
// latch, the directory word, the record) where a GET the log's memory
// serves takes one; prefetched for the whole batch at once, they overlap.
func (s *Session) PrefetchKey(key []byte) {
	st := s.st
	h := st.hash(key)
	s.prefetch = append(s.prefetch, uintptr(unsafe.Pointer(&st.ix.mainBucket(h)[0])))
	if st.rc != nil {
		s.rcHashes = append(s.rcHashes, h)
	}
	if st.dev != nil && s.warmed < len(s.free) {
		pr := s.slot(s.free[len(s.free)-1-s.warmed])
		s.prefetch = append(s.prefetch, uintptr(unsafe.Pointer(pr)), uintptr(unsafe.Pointer(&pr.window)))
		s.warmed++
	}
}

// Prefetch starts loading the lines PrefetchKey noted, and returns at
// once.
func (s *Session) Prefetch() {
	cacheline.PrefetchAll(s.prefetch)
	s.prefetch = s.prefetch[:0]
	if len(s.rcHashes) == 0 {
		return
	}
	st := s.st
	begin, head := st.log.begin.Load(), st.log.head.Load()
	addrs := s.rcHashes[:0] // each key's address overwrites its hash
	for _, h := range s.rcHashes {
		if addr := st.ix.find(h, begin); addr >= begin && addr < head {
			s.prefetch = st.rc.appendLines(s.prefetch, addr)
			addrs = append(addrs, addr)
		}
	}
	cacheline.PrefetchAll(s.prefetch)
	s.prefetch = s.prefetch[:0]
	// A third pass, the sets' lines loading: the records' own lines.
	for _, addr := range addrs {
		s.prefetch = st.rc.appendRecordLines(s.prefetch, addr)
	}
	s.rcHashes = s.rcHashes[:0]
	cacheline.PrefetchAll(s.prefetch)
	s.prefetch = s.prefetch[:0]
}

// Pending is the number of reads issued and not yet delivered.
func (s *Session) Pending() int { return s.outstanding }

// CompletePending submits the queued device reads of this session in one
// batch and delivers the results of the completed ones to fn (value is valid
// only during fn; status Found or NotFound, with err set when the read
// failed). With wait it returns only when every pending read of this
// session has been delivered.
func (s *Session) CompletePending(wait bool, fn func(token uint64, value []byte, st Status, err error)) error {
	if wait {
		return s.CompleteAtLeast(math.MaxInt, fn)
	}
	return s.CompleteAtLeast(0, fn)
}

// CompleteAtLeast is CompletePending that returns once at least n results
// have been delivered (or none are pending). It lets a caller keep a steady
// number of reads in flight: issue, CompleteAtLeast(1), issue again.
func (s *Session) CompleteAtLeast(n int, fn func(token uint64, value []byte, st Status, err error)) error {
	if s.closed || (s.st.closed.Load() && s.outstanding == 0) {
		return ErrClosed
	}
	delivered := 0
	s.warmed = 0
	for {
		s.pumpChecks()
		if len(s.queued) > 0 {
			// Once n are delivered, no read may complete inside submit:
			// the caller must get control back between deliveries to
			// hold its replies to its budget (a lone read admitted after
			// each delivery would otherwise complete inline, one after
			// another, and every big GET of a pipeline be gathered in one
			// call: TestPipelineOfBigGets).
			delivered += s.submit(fn, delivered < n)
		}
		top := s.done.Swap(0)
		if top != 0 {
			s.takenAt = loghist.Now()
		}
		// The windows a disk just filled are not in the cache: start
		// loading every record before decoding the first.
		taken := int64(0)
		for t := top; t != 0; taken++ {
			pr := s.slot(uint32(t - 1))
			if s.st.coldReads {
				s.noteRecord(pr)
			}
			t = uint64(pr.next)
		}
		s.Prefetch()
		if taken > 0 {
			// Counted once per batch taken: these are the store-wide
			// counters every session adds to, and each add is a locked
			// instruction.
			s.st.pendingReads.Add(-taken)
			s.st.completedReads.Add(taken)
		}
		for top != 0 {
			i := uint32(top - 1)
			pr := s.slot(i)
			top = uint64(pr.next)
			if s.resolve(i, pr, fn) {
				delivered++
			}
		}
		delivered += s.admitDeferred(fn)
		if s.outstanding == 0 {
			return nil
		}
		if len(s.queued) > 0 || s.checks.Load() != 0 {
			continue
		}
		if delivered >= n {
			return nil
		}
		s.waitNotify()
	}
}

// noteRecord notes, for the next Prefetch, the lines of pr's window that
// its record is expected on: from the record's own offset, where its
// sector starts the window, for the size the session's last record
// suggests.
//
// Why not the window's first line (what it was): a record lies anywhere in
// its sector, so that line held the header of a 128-byte record only one
// time in eight, and the header's first load, in decodeRecord, was a miss
// (many of decodeRecord's samples on that one instruction), as was the
// next line's in the copy of the value into the reply (memmove). With the
// record's own lines prefetched the copy's miss mostly went, and the server
// spent less CPU per GET at 8 and at 32 connections. Only for a disk:
// localmemory's windows were just written by a CPU, and prefetching them
// read fewer GETs, while leaving them alone read as many as the old
// first-line prefetch (docs/notes/2026-12-07-comment-figures.md has the
// figures).
func (s *Session) noteRecord(pr *pendingRead) {
	w := pr.window
	off := pr.addr - s.st.sectorStart(pr.addr)
	if off >= uint64(len(w)) {
		return
	}
	end := min(off+recordBytes(uint64(pr.keyLen), s.valueGuess, false), uint64(len(w)))
	// A window starts on a sector, so on a line too.
	for at := off &^ (cacheline.Bytes - 1); at < end; at += cacheline.Bytes {
		s.prefetch = append(s.prefetch, uintptr(unsafe.Pointer(&w[at])))
	}
}

// submit hands every queued read to the device in one Submit; reads the
// device refuses are delivered with its error. It returns how many it
// delivered that way. With idleOK a lone read may go through the device's
// idle path and so complete before submit returns.
func (s *Session) submit(fn func(uint64, []byte, Status, error), idleOK bool) int {
	s.reqs = s.reqs[:0]
	for _, i := range s.queued {
		pr := s.slot(i)
		pr.err = nil
		s.reqs = append(s.reqs, device.Request{Op: device.OpRead, Fixed: s.fixedOf(i, pr), Offset: s.st.sectorStart(pr.addr), Buf: pr.window, UserData: uint64(s.id)<<32 | uint64(i)})
	}
	s.st.pendingReads.Add(int64(len(s.reqs)))
	begin := loghist.Now()
	var accepted int
	var err error
	if idleOK && s.st.idle != nil && len(s.reqs) == 1 {
		// On an idle device the read completes inside SubmitIdle, on
		// this goroutine: its time shows as the submit stage.
		accepted, err = s.st.idle.SubmitIdle(s.reqs)
	} else {
		accepted, err = s.st.dev.Submit(s.reqs)
	}
	end := loghist.Now()
	for _, i := range s.queued {
		pr := s.slot(i)
		pr.submitBegin, pr.submitEnd = begin, end
	}
	failed := 0
	if err != nil {
		s.st.pendingReads.Add(-int64(len(s.reqs) - accepted))
		for _, i := range s.queued[accepted:] {
			pr := s.slot(i)
			fn(pr.token, nil, NotFound, fmt.Errorf("store: submit a read of address %d: %w", pr.addr, err))
			s.releaseSlot(i)
			failed++
		}
	}
	s.queued = s.queued[:0]
	return failed
}

// resolve handles the completion of slot i: it delivers the result, or
// re-aims the slot (a longer record, or a tag collision's previous address)
// and queues it again. It reports whether it delivered.
func (s *Session) resolve(i uint32, pr *pendingRead, fn func(uint64, []byte, Status, error)) bool {
	st := s.st
	deliver := func(v []byte, status Status, err error) bool {
		s.lastRead = ReadTimes{SubmitBegin: pr.submitBegin, SubmitEnd: pr.submitEnd, Completed: pr.completedAt, Taken: s.takenAt}
		fn(pr.token, v, status, err)
		// The caller keeps what it was given until it sets the budget
		// again (see SetReadBudget).
		s.readBudget -= int64(len(v))
		s.releaseSlot(i)
		return true
	}
	if pr.err != nil {
		return deliver(nil, NotFound, fmt.Errorf("store: read the record at address %d: %w", pr.addr, pr.err))
	}
	if n := int(pr.n); n != len(pr.window) {
		return deliver(nil, NotFound, fmt.Errorf("store: read the record at address %d: got %d bytes, want %d: %w", pr.addr, n, len(pr.window), device.ErrShortIO))
	}
	h, k, v, whole, err := st.log.decodeRecord(pr.window, st.sectorStart(pr.addr), pr.addr)
	if err != nil {
		return deliver(nil, NotFound, err)
	}
	if !whole {
		// The record is longer than guessed: fetch it whole.
		s.valueGuess = h.valueBytes
		if err := s.aimRead(i, pr, pr.addr, h.size()); err != nil {
			return deliver(nil, NotFound, err)
		}
		return false
	}
	if bytes.Equal(k, pr.key()) {
		s.valueGuess = h.valueBytes
		if s.expired(&h) {
			return deliver(nil, NotFound, s.reclaim(pr.key(), st.hash(pr.key()), pr.addr))
		}
		if st.rc != nil {
			off := pr.addr - st.sectorStart(pr.addr)
			st.rc.admit(pr.addr, pr.window[off:off+h.size()])
		}
		if h.tombstone {
			return deliver(nil, NotFound, nil)
		}
		return deliver(v, Found, nil)
	}
	// A tag collision: follow the chain, in memory while it stays there.
	begin := st.log.begin.Load()
	addr := h.prev
	for addr >= begin {
		var hd header
		v, out := s.mem, memGone
		if addr >= st.log.head.Load() {
			if v, out, err = s.inMemory(addr, pr.key(), s.mem, &hd); err != nil {
				return deliver(nil, NotFound, err)
			}
		}
		if out == memGone && st.rc != nil {
			v, out = st.rc.lookup(addr, pr.key(), s.mem, &hd)
		}
		switch out {
		case memMatch:
			s.mem = v
			if hd.tombstone {
				return deliver(nil, NotFound, nil)
			}
			if s.expired(&hd) {
				return deliver(nil, NotFound, s.reclaim(pr.key(), st.hash(pr.key()), addr))
			}
			return deliver(v, Found, nil)
		case memOther:
			addr = hd.prev
			continue
		}
		if err := s.aimRead(i, pr, addr, recordBytes(uint64(len(pr.key())), s.valueGuess, false)); err != nil {
			return deliver(nil, NotFound, err)
		}
		return false
	}
	return deliver(nil, NotFound, nil)
}

// Close waits for the session's pending reads (discarding them) and releases
// its buffers.
func (s *Session) Close() {
	if s.closed {
		return
	}
	s.CompletePending(true, func(uint64, []byte, Status, error) {})
	s.closed = true
	for i := 0; i < s.nChunks; i++ {
		c := s.chunks[i].Load()
		for j := range c.slots {
			if c.slots[j].big != nil {
				device.FreeBuffer(c.slots[j].big)
			}
		}
		if r, ok := s.st.dev.(bufferRegistrar); ok {
			r.UnregisterBuffer(c.fixed)
		}
		s.st.chunkBufs.put(c.buf)
	}
	device.FreeBuffer(s.syncBuf)
	s.syncBuf = nil
	device.FreeBuffer(s.scanBuf)
	s.scanBuf = nil
	s.st.dropSession(s.id)
}
