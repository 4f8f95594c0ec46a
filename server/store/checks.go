package store

import (
	"bytes"
	"time"

	"github.com/tierbench/tierbench/device"
)

// The upserts' existence checks: an upsert whose key's chain leaves memory
// does not wait for the device; a read settles later whether the key was
// new, and so the key counter. A check reads a record's header and key
// only (headBytes, decodeHead), never its value: a SET over a big value
// on the device costs a sector or two, not the old value's size.

// pumpChecks settles the upserts' existence checks that have completed and
// submits the queued ones. Every operation of the session calls it, so the
// key counter catches up at the session's next call at the latest.
func (s *Session) pumpChecks() {
	if s.checking == 0 {
		return
	}
	top := s.checks.Swap(0)
	for top != 0 {
		i := uint32(top - 1)
		pr := s.slot(i)
		top = uint64(pr.next)
		s.settle(i, pr)
	}
	if len(s.checkQueued) == 0 {
		return
	}
	s.checkReqs = s.checkReqs[:0]
	for _, i := range s.checkQueued {
		pr := s.slot(i)
		pr.err = nil
		pr.settled.Store(false)
		pr.armed.Add(1)
		s.checkReqs = append(s.checkReqs, device.Request{Op: device.OpRead, Fixed: s.fixedOf(i, pr), Offset: s.st.sectorStart(pr.addr), Buf: pr.window, UserData: uint64(s.id)<<32 | uint64(i) | checkFlag})
	}
	s.st.pendingReads.Add(int64(len(s.checkReqs)))
	accepted, err := s.st.dev.Submit(s.checkReqs)
	if err != nil {
		// The device refused: count the keys as they were (live), the
		// guess that is right for every overwrite.
		s.st.pendingReads.Add(-int64(len(s.checkReqs) - accepted))
		for _, i := range s.checkQueued[accepted:] {
			s.checking--
			s.st.checksSettled.Add(1)
			s.releaseSlot(i)
		}
	}
	s.checkQueued = s.checkQueued[:0]
}

// settleNow runs on the device's completion goroutine for a check whose
// read succeeded: when the record read decides the question (it is the
// key's, or another key's that ends the chain) it counts the key if it was
// new and reports true, so the counter does not wait for the session's
// next call. A longer record or a chain to follow is left to the session.
// It only reads the slot (ordered by armed) and the window the device
// filled.
func (st *Store) settleNow(pr *pendingRead) bool {
	h, k, whole, err := st.log.decodeHead(pr.window, st.sectorStart(pr.addr), pr.addr)
	if err != nil || !whole {
		return false
	}
	live := false
	switch {
	case bytes.Equal(k, pr.key()):
		live = !h.tombstone
	case h.prev >= st.log.begin.Load():
		return false
	}
	if pr.self >= st.log.begin.Load() {
		if !live {
			st.keys.Add(1)
		}
		st.countExpiring(live && h.expires, pr.selfExpires)
	}
	st.checksSettled.Add(1)
	return true
}

// waitNotify blocks until a completion arrives, unless one is already on
// a stack. It may return without one (a token left by a completion that
// raced with the last wait, or completions it took from the device for
// other sessions): callers look again and wait again.
//
// Before it blocks it takes what the device has completed and no reaper
// has taken yet (device.Poller, every session's): a busy server's reapers
// wake through the netpoller, which the runtime looks at only when it
// runs out of goroutines to run, so the completed reads would wait behind
// the connections.
func (s *Session) waitNotify() {
	if s.st.poll != nil && s.st.poll.Poll() > 0 {
		return
	}
	s.waiting.Store(true)
	if s.done.Load() == 0 && s.checks.Load() == 0 {
		<-s.notify
	}
	s.waiting.Store(false)
}

// Settle waits for this session's pending existence checks (see Upsert),
// so that the key counter reflects every write the session has made; its
// pending reads stay pending. A server calls it before answering DBSIZE.
func (s *Session) Settle() {
	for {
		s.pumpChecks()
		if s.checking == 0 {
			return
		}
		s.waitNotify()
	}
}

// SubmitChecks hands the device the existence checks this session's
// writes queued, and settles those already back, without waiting. A
// connection calls it before its replies go out: a check decided by one
// read is then settled by the device's completion goroutine (settleNow)
// even if the session makes no further call, and SettleAll on another
// session can wait for it.
func (s *Session) SubmitChecks() { s.pumpChecks() }

// SettleAll is Settle, and then a wait of up to maxWait for the other
// sessions' existence checks to settle, so that DBSIZE from one connection
// counts the keys another connection's acknowledged writes made new. Those
// checks settle on the device's completion goroutine, or at their session's
// next call or Close: a load's connections are closing when a client asks
// DBSIZE right after it (a run's load check read 199 999 of 200 000 keys
// once, in a fresh clone's CI), and a connection that wrote and went idle
// had its checks queued until its next command. An idle session with a
// check that must follow a chain (another key under the same index tag)
// settles it only at its next call, hence the bound.
//
// It waits until as many checks have settled as had been made when it was
// called, not until none is in flight: under other connections' steady
// writes there always are some, and DBSIZE would wait the whole bound each
// time. Checks settle out of order, so with writes going on it may return
// while an older one is still out; DBSIZE is a moment's count then anyway.
func (s *Session) SettleAll(maxWait time.Duration) {
	s.Settle()
	st := s.st
	made := st.checksMade.Load()
	deadline := time.Now().Add(maxWait)
	for nap := 20 * time.Microsecond; st.checksSettled.Load() < made && time.Now().Before(deadline); nap = min(2*nap, time.Millisecond) {
		time.Sleep(nap)
	}
}

// settle takes one completed existence check: when the chain below the
// upsert's record did not hold the key live, the key was new and is
// counted. Each write's effect on the counter depends only on the chain
// below its own record, which never changes, so the counter is exact once
// every check has settled, whatever writes happened in between.
func (s *Session) settle(i uint32, pr *pendingRead) {
	st := s.st
	st.pendingReads.Add(-1)
	st.completedReads.Add(1)
	// finish settles the check: the key's replaced record was present
	// (live), with an expiry time or not.
	finish := func(live, expires bool) {
		if pr.self >= st.log.begin.Load() {
			if !live {
				st.keys.Add(1)
			}
			st.countExpiring(live && expires, pr.selfExpires)
		}
		st.checksSettled.Add(1)
		pr.check = false
		s.checking--
		s.releaseSlot(i)
	}
	if pr.settled.Load() {
		pr.check = false
		s.checking--
		s.releaseSlot(i)
		return
	}
	if pr.err != nil || int(pr.n) != len(pr.window) {
		finish(true, false) // unknown: assume an overwrite of a key without expiry
		return
	}
	h, k, whole, err := st.log.decodeHead(pr.window, st.sectorStart(pr.addr), pr.addr)
	switch {
	case err != nil:
		finish(true, false)
		return
	case !whole:
		if s.aim(i, pr, pr.addr, h.metaBytes()+h.keyBytes) != nil {
			finish(true, false)
			return
		}
		s.checkQueued = append(s.checkQueued, i)
		return
	case bytes.Equal(k, pr.key()):
		finish(!h.tombstone, h.expires)
		return
	}
	if h.prev < st.log.begin.Load() {
		finish(false, false)
		return
	}
	if s.aim(i, pr, h.prev, headBytes(uint64(len(pr.key())))) != nil {
		finish(true, false)
		return
	}
	s.checkQueued = append(s.checkQueued, i)
}
