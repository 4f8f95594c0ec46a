package store

import (
	"bytes"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Expiry. A record with a TTL carries its absolute expiry time (Unix
// milliseconds) in an 8-byte word after its header, announced by a header
// bit, so records without one pay nothing. A key whose time has passed is
// found expired by whoever reads it (Read, CompletePending, Lookup, the
// writers, the scan) and is then reclaimed: a tombstone is written if the
// expired record is still the key's newest, and Stats.Keys counts it out.
// Until then it counts, as in Redis, where DBSIZE includes the expired keys
// that neither an access nor the active expiry has reclaimed yet.
//
// The active sweep: every write with an expiry also adds (deadline, record
// address) to a schedule of min-heaps, sharded by key hash. A sweeper
// goroutine sleeps until the earliest deadline, then reclaims at most
// sweepBatch due entries per tick, pausing sweepPause between ticks while
// more are due, so reclaiming a mass of keys takes a bounded share of a
// CPU. An entry whose record was overwritten or deleted since is dropped
// when its deadline comes (reading the record to learn its key: a device
// read when it has left memory), so the schedule costs 16 bytes per write
// with an expiry until that write's deadline, whether or not the key was
// rewritten.

const (
	scheduleShards = 16
	sweepBatch     = 512
	sweepPause     = time.Millisecond
)

// now is the store's clock, in Unix milliseconds.
func (st *Store) now() int64 { return time.Now().UnixMilli() + st.skewMillis.Load() }

// schedule is the active sweep's list of deadlines.
type schedule struct {
	shards [scheduleShards]scheduleShard
	wake   chan struct{} // capacity 1: a deadline earlier than sleepUntil arrived
	// sleepUntil is the deadline the sweeper sleeps towards; MaxInt64
	// while it is awake, so that every add wakes it again then.
	sleepUntil atomic.Int64
	entries    atomic.Int64
	// popping is read-held by every expireDue from its first pop until
	// the keys it popped are reclaimed, and taken by ExpireDue once its
	// own are: popped entries are no longer in the heap, so a count must
	// wait for whoever holds them (the sweeper's reclaim of a record on
	// the device takes a device read) or it counts keys whose time has
	// passed.
	popping sync.RWMutex
}

type scheduleShard struct {
	mu   sync.Mutex
	heap []uint64 // (deadline, address) pairs: a min-heap on deadline
	_    [32]byte // keep shards on separate cache lines
}

func (sc *schedule) init() {
	sc.wake = make(chan struct{}, 1)
	sc.sleepUntil.Store(math.MaxInt64)
}

// add schedules the record at addr, of a key with hash h, for deadline.
// Writers call it with the key's bucket latch held; the sweeper never holds
// a shard lock while it takes a latch.
func (sc *schedule) add(h uint64, deadline int64, addr uint64) {
	sh := &sc.shards[h%scheduleShards]
	sh.mu.Lock()
	sh.heap = append(sh.heap, uint64(deadline), addr)
	sh.up(len(sh.heap)/2 - 1)
	sh.mu.Unlock()
	sc.entries.Add(1)
	if deadline < sc.sleepUntil.Load() {
		select {
		case sc.wake <- struct{}{}:
		default:
		}
	}
}

func (sh *scheduleShard) less(i, j int) bool { return sh.heap[2*i] < sh.heap[2*j] }

func (sh *scheduleShard) swap(i, j int) {
	h := sh.heap
	h[2*i], h[2*j] = h[2*j], h[2*i]
	h[2*i+1], h[2*j+1] = h[2*j+1], h[2*i+1]
}

func (sh *scheduleShard) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !sh.less(i, p) {
			return
		}
		sh.swap(i, p)
		i = p
	}
}

func (sh *scheduleShard) down(i int) {
	n := len(sh.heap) / 2
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && sh.less(c+1, c) {
			c++
		}
		if !sh.less(c, i) {
			return
		}
		sh.swap(i, c)
		i = c
	}
}

// popDue moves at most max entries due at now to out, as pairs.
func (sh *scheduleShard) popDue(now int64, out []uint64, max int) []uint64 {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for n := 0; n < max && len(sh.heap) > 0 && int64(sh.heap[0]) <= now; n++ {
		out = append(out, sh.heap[0], sh.heap[1])
		last := len(sh.heap) - 2
		sh.swap(0, last/2)
		sh.heap = sh.heap[:last]
		sh.down(0)
	}
	return out
}

// earliest is the first deadline of any shard, or MaxInt64.
func (sc *schedule) earliest() int64 {
	e := int64(math.MaxInt64)
	for i := range sc.shards {
		sh := &sc.shards[i]
		sh.mu.Lock()
		if len(sh.heap) > 0 {
			e = min(e, int64(sh.heap[0]))
		}
		sh.mu.Unlock()
	}
	return e
}

// clear drops every entry (FlushAll).
func (sc *schedule) clear() {
	for i := range sc.shards {
		sh := &sc.shards[i]
		sh.mu.Lock()
		sc.entries.Add(-int64(len(sh.heap) / 2))
		sh.heap = nil
		sh.mu.Unlock()
	}
}

// sweeper is the active expiry: see the comment at the top of this file.
func (st *Store) sweeper() {
	defer close(st.sweepDone)
	sess := st.NewSession()
	defer sess.Close()
	sc := &st.sched
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		n, err := sess.expireDue(st.now(), sweepBatch)
		if err != nil {
			st.sweepErrors.Add(1)
		}
		wait := sweepPause
		if n < sweepBatch {
			next := sc.earliest()
			sc.sleepUntil.Store(next)
			if next == math.MaxInt64 {
				wait = -1
			} else {
				wait = time.Duration(max(next-st.now(), 0)) * time.Millisecond
			}
		}
		if wait >= 0 {
			timer.Reset(wait)
		}
		select {
		case <-st.sweepStop:
			timer.Stop()
			return
		case <-sc.wake:
			timer.Stop()
		case <-timer.C:
		}
		sc.sleepUntil.Store(math.MaxInt64)
	}
}

// stopSweeper ends the active sweep and waits for it; only Close and tests
// call it (a test that needs an expired key to stay unreclaimed until a
// session finds it), and only the first call does anything.
func (st *Store) stopSweeper() {
	st.sweepOnce.Do(func() {
		close(st.sweepStop)
		<-st.sweepDone
	})
}

// ExpireDue reclaims at most max keys whose expiry time has passed, from the
// active sweep's schedule, and returns how many schedule entries it handled;
// it returns once the entries other sessions and the sweeper had popped are
// reclaimed too. A server calls it before answering DBSIZE, so that the
// count does not wait for the sweeper's next tick, nor count a key the
// sweeper is reclaiming.
func (s *Session) ExpireDue(max int) (int, error) {
	if s.closed || s.st.closed.Load() {
		return 0, ErrClosed
	}
	s.pumpChecks()
	n, err := s.expireDue(s.st.now(), max)
	sc := &s.st.sched
	sc.popping.Lock()
	sc.popping.Unlock() // a barrier: it waits for the holders and keeps nothing
	return n, err
}

func (s *Session) expireDue(now int64, max int) (int, error) {
	sc := &s.st.sched
	sc.popping.RLock()
	defer sc.popping.RUnlock()
	handled := 0
	var firstErr error
	for i := 0; i < scheduleShards && handled < max; i++ {
		sh := &sc.shards[(s.sweepShard+i)%scheduleShards]
		s.due = sh.popDue(now, s.due[:0], max-handled)
		for j := 0; j < len(s.due); j += 2 {
			if err := s.expireEntry(int64(s.due[j]), s.due[j+1]); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		handled += len(s.due) / 2
		sc.entries.Add(-int64(len(s.due) / 2))
	}
	s.sweepShard++
	return handled, firstErr
}

// expireEntry reclaims the key of the record at addr, whose deadline has
// come, unless it was rewritten since.
func (s *Session) expireEntry(deadline int64, addr uint64) error {
	st := s.st
	if addr < st.log.begin.Load() {
		return nil
	}
	key, h, err := s.recordAt(addr, s.keyA[:0], false)
	s.keyA = key
	if err != nil {
		return fmt.Errorf("store: expire the record at address %d: %w", addr, err)
	}
	if h.tombstone || !h.expires || h.expireAt != deadline {
		return fmt.Errorf("%w at address %d: scheduled to expire at %d, but its header says expiry %v at %d", errCorrupt, addr, deadline, h.expires, h.expireAt)
	}
	return s.reclaim(key, st.hash(key), addr)
}

// reclaim writes a tombstone for key, of hash h, if its newest record is
// still the expired one at addr, and counts the key out.
func (s *Session) reclaim(key []byte, h, addr uint64) error {
	st := s.st
	b := st.ix.lock(h)
	defer st.ix.unlock(b)
	begin := st.log.begin.Load()
	if addr < begin {
		return nil
	}
	slot, head, err := st.ix.slotFor(b, h, begin)
	if err != nil || head == 0 {
		return err
	}
	// Chains run from newer to older addresses: a record of key above addr
	// means addr is no longer its newest.
	for a := head; a != addr; {
		if a < addr {
			return nil
		}
		k, hd, err := s.recordAt(a, s.keyB[:0], false)
		s.keyB = k
		if err != nil {
			return err
		}
		if bytes.Equal(k, key) {
			return nil
		}
		a = hd.prev
	}
	size := recordBytes(uint64(len(key)), 0, false)
	at, rec, f, err := st.log.allocate(size)
	if err != nil {
		return err
	}
	writeRecord(rec, head, true, 0, key, nil)
	st.log.doneWriting(f)
	atomic.StoreUint64(slot, h>>tagShift<<tagShift|at)
	st.keys.Add(-1)
	st.expiring.Add(-1)
	st.expiredKeys.Add(1)
	return nil
}

// recordAt reads the record at addr, from memory or synchronously from the
// device, whatever its key. The key is appended to keyDst[:0]; with
// wantValue the value goes to s.old.
func (s *Session) recordAt(addr uint64, keyDst []byte, wantValue bool) ([]byte, header, error) {
	st := s.st
	l := st.log
	if addr >= l.head.Load() {
		if page, f, ok := l.pin(addr); ok {
			defer l.unpin(f)
			off := addr & l.pageMask
			h := readHeader(page[off:])
			if err := l.checkRecord(addr, h); err != nil {
				return keyDst[:0], h, err
			}
			h.readExpiry(page[off:])
			k := off + h.metaBytes()
			key := append(keyDst[:0], page[k:k+h.keyBytes]...)
			if wantValue && !h.tombstone {
				s.old = append(s.old[:0], page[k+h.keyBytes:k+h.keyBytes+h.valueBytes]...)
			}
			return key, h, nil
		}
	}
	if st.dev == nil {
		return keyDst[:0], header{}, fmt.Errorf("%w: address %d is not in memory and there is no storage tier", errCorrupt, addr)
	}
	guess := recordBytes(16, s.valueGuess, false)
	for {
		w, start, err := s.readSync(addr, guess)
		if err != nil {
			return keyDst[:0], header{}, err
		}
		h, k, v, whole, err := l.decodeRecord(w, start, addr)
		if err != nil {
			return keyDst[:0], h, err
		}
		if !whole {
			guess = h.size()
			continue
		}
		if wantValue && !h.tombstone {
			s.old = append(s.old[:0], v...)
		}
		return append(keyDst[:0], k...), h, nil
	}
}

// Now is the store's clock in Unix milliseconds: what expiry times are
// compared with.
func (st *Store) Now() int64 { return st.now() }

// HoldClock makes the session read the clock at most once until
// ReleaseClock: every expiry decision in between takes the time of the
// first one that needs it. A server holds the clock over each batch of
// requests that arrived together, so that a pipelined batch reads it once
// instead of once per key with a TTL (on a virtual machine a clock read
// costs a large part of what an in-memory GET does), as Redis takes one
// time per command and one per transaction. A second HoldClock starts a new
// reading.
func (s *Session) HoldClock() { s.clockHeld, s.clockMillis = true, 0 }

// ReleaseClock ends HoldClock: each decision reads the clock again.
func (s *Session) ReleaseClock() { s.clockHeld = false }

// now is the time the session's expiry decisions use, in Unix milliseconds.
func (s *Session) now() int64 {
	if !s.clockHeld {
		return s.st.now()
	}
	if s.clockMillis == 0 {
		s.clockMillis = s.st.now()
	}
	return s.clockMillis
}

// expired reports whether h's time has passed, reading the clock only for
// a record that has one: most records have none, and on a virtual machine
// a clock reading is a measurable part of a device GET's CPU.
func (s *Session) expired(h *header) bool { return h.expires && h.expireAt <= s.now() }

// Now is the session's clock in Unix milliseconds: the store's clock, or
// the reading HoldClock keeps.
func (s *Session) Now() int64 { return s.now() }
