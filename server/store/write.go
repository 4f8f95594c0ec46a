package store

import (
	"bytes"
	"fmt"
	"sync/atomic"
)

// Entry is a key's state as Lookup and Modify find it.
type Entry struct {
	// Live: the key exists and its expiry time, if any, has not passed.
	Live bool
	// ExpireAt is the key's expiry time in Unix milliseconds, 0 for none.
	ExpireAt int64
	// Value is the key's value when Live (and asked for); valid until the
	// session's next call.
	Value []byte
}

// Op is what a Modify function decides to do with a key.
type Op uint8

const (
	// Keep writes nothing.
	Keep Op = iota
	// Put writes Change.Value with Change.ExpireAt (0: no expiry).
	Put
	// Remove deletes the key (a tombstone, when it exists).
	Remove
)

// Change is a Modify function's decision.
type Change struct {
	Op       Op
	Value    []byte
	ExpireAt int64 // Unix milliseconds, 0 for none; a time already past writes a tombstone instead
}

// found is what a writer learns about a key's newest record: present says
// the newest record is not a tombstone (the key counts in Stats.Keys, even
// if expired, until it is reclaimed); live adds that it has not expired.
type found struct {
	present, live bool
	expireAt      int64
}

func (s *Session) foundOf(h *header) found {
	switch {
	case h.tombstone:
		return found{}
	case !h.expires:
		return found{present: true, live: true}
	}
	// The clock only for a record with an expiry: reading it costs a
	// plain overwrite more than the rest of the check.
	return s.foundExpiring(h)
}

// foundExpiring is foundOf for a record with an expiry time; not inlined,
// so that foundOf is.
//
//go:noinline
func (s *Session) foundExpiring(h *header) found {
	return found{present: true, live: !s.expired(h), expireAt: h.expireAt}
}

// lookupSync finds key's newest record from the chain at addr, reading the
// device synchronously when the chain leaves memory. With wantValue the
// value is copied to s.old. Writers call it with the bucket latch held.
func (s *Session) lookupSync(key []byte, addr uint64, wantValue bool) (found, error) {
	st := s.st
	begin := st.log.begin.Load()
	// Without the value, the header and key settle it: never read a
	// record's value to learn whether it exists.
	first := headBytes(uint64(len(key)))
	if wantValue {
		first = recordBytes(uint64(len(key)), s.valueGuess, false)
	}
	guess := first
	for addr >= begin {
		if addr >= st.log.head.Load() {
			var hd header
			v, out, err := s.inMemory(addr, key, s.old[:0], &hd)
			if err != nil {
				return found{}, err
			}
			switch out {
			case memMatch:
				s.old = v
				return s.foundOf(&hd), nil
			case memOther:
				addr = hd.prev
				continue
			}
		}
		if st.dev == nil {
			return found{}, fmt.Errorf("%w: address %d is not in memory and there is no storage tier", errCorrupt, addr)
		}
		w, start, err := s.readSync(addr, guess)
		if err != nil {
			return found{}, err
		}
		var h header
		var k, v []byte
		var whole bool
		if wantValue {
			h, k, v, whole, err = st.log.decodeRecord(w, start, addr)
		} else {
			h, k, whole, err = st.log.decodeHead(w, start, addr)
		}
		if err != nil {
			return found{}, err
		}
		if !whole {
			if wantValue {
				guess = h.size()
			} else {
				guess = h.metaBytes() + h.keyBytes
			}
			continue
		}
		guess = first
		if bytes.Equal(k, key) {
			if !h.tombstone && wantValue {
				s.old = append(s.old[:0], v...)
			}
			return s.foundOf(&h), nil
		}
		addr = h.prev
	}
	return found{}, nil
}

// write appends a record for key with the bucket latch for h held, and
// publishes it in the index. decide gets what the key's newest record says
// (its value in s.old when wantOld) and returns the value and expiry to
// write and what to do. With asyncCheck (an upsert, which ignores what it
// finds) a chain that leaves memory is settled by an asynchronous device
// read instead of a wait. It returns what it found.
func (s *Session) write(key []byte, h uint64, wantOld, asyncCheck bool, decide func(f found) ([]byte, int64, Op, error)) (found, error) {
	st := s.st
	b := st.ix.lock(h)
	defer st.ix.unlock(b)
	begin := st.log.begin.Load()
	slot, cur, err := st.ix.slotFor(b, h, begin)
	if err != nil {
		return found{}, err
	}
	var f found
	s.old = s.old[:0]
	// checkAt is where an upsert's chain leaves memory before the key was
	// found: whether the key was present is then settled by an asynchronous
	// device read (see settle), so that the upsert does not wait for it.
	var checkAt uint64
	check := uint32(0)
	if cur != 0 {
		if asyncCheck && st.dev != nil {
			if f, checkAt, err = s.lookupMemory(key, cur); err != nil {
				return found{}, err
			}
			if checkAt != 0 {
				if check, err = s.takeSlot(); err != nil {
					// Too many reads pending: find out synchronously.
					if f, err = s.lookupSync(key, checkAt, false); err != nil {
						return found{}, err
					}
					checkAt = 0
				}
			}
		} else if f, err = s.lookupSync(key, cur, wantOld); err != nil {
			return found{}, err
		}
	}
	fail := func(err error) (found, error) {
		if checkAt != 0 {
			s.releaseSlot(check)
		}
		return f, err
	}
	v, expireAt, op, err := decide(f)
	if err != nil || op == Keep || (op == Remove && !f.present && checkAt == 0) {
		return fail(err)
	}
	tombstone := op == Remove
	if tombstone {
		v, expireAt = nil, 0
	}
	size := recordBytes(uint64(len(key)), uint64(len(v)), expireAt != 0)
	if size > st.log.pageBytes {
		return fail(tooLarge(len(key), len(v), expireAt != 0, st.log.pageBytes))
	}
	addr, rec, fr, err := st.log.allocate(size)
	if err != nil {
		return fail(err)
	}
	if expireAt != 0 {
		writeExpiringRecord(rec, cur, expireAt, key, v)
	} else {
		writePlainRecord(rec, cur, tombstone, key, v)
	}
	st.log.doneWriting(fr)
	atomic.StoreUint64(slot, h>>tagShift<<tagShift|addr)
	if st.rc != nil && cur != 0 && cur < st.log.head.Load() {
		st.rc.invalidate(cur, key)
	}
	if expireAt != 0 {
		st.sched.add(h, expireAt, addr)
	}
	if checkAt != 0 {
		pr := s.slot(check)
		pr.setKey(key)
		if err := s.aim(check, pr, checkAt, headBytes(uint64(len(key)))); err != nil {
			s.releaseSlot(check)
			return f, err
		}
		pr.check, pr.self, pr.selfExpires, pr.timed = true, addr, expireAt != 0, false
		s.checking++
		st.checksMade.Add(1)
		s.checkQueued = append(s.checkQueued, check)
		return f, nil
	}
	switch {
	case tombstone && f.present:
		st.keys.Add(-1)
	case !tombstone && !f.present:
		st.keys.Add(1)
	}
	st.countExpiring(f.present && f.expireAt != 0, expireAt != 0)
	return f, nil
}

// countExpiring moves the expiring-keys count from a key's replaced record
// to its new one: each says whether it is a present record with an expiry
// time (a tombstone never is). A plain overwrite touches nothing shared.
func (st *Store) countExpiring(before, after bool) {
	switch {
	case before && !after:
		st.expiring.Add(-1)
	case after && !before:
		st.expiring.Add(1)
	}
}

// lookupMemory walks key's chain from addr while it stays in memory. It
// returns what the key's newest record says, or the address where the chain
// leaves memory before the key was found (0 when the chain ended).
func (s *Session) lookupMemory(key []byte, addr uint64) (f found, deviceAt uint64, err error) {
	st := s.st
	begin := st.log.begin.Load()
	for addr >= begin {
		if addr < st.log.head.Load() {
			return found{}, addr, nil
		}
		var hd header
		v, out, err := s.inMemory(addr, key, s.old[:0], &hd)
		if err != nil {
			return found{}, 0, err
		}
		switch out {
		case memMatch:
			s.old = v
			return s.foundOf(&hd), 0, nil
		case memOther:
			addr = hd.prev
		default:
			return found{}, addr, nil
		}
	}
	return found{}, 0, nil
}

// Upsert sets key to value without an expiry, appending a record. It never
// waits for the device: when the key's chain leaves memory before the key is
// found, the read that settles whether the key is new (and so the key
// counter) is submitted at once and settled by the session's next operation.
func (s *Session) Upsert(key, value []byte) error { return s.UpsertExpire(key, value, 0) }

// UpsertExpire is Upsert with an absolute expiry time in Unix milliseconds
// (0: none). A time already past deletes the key, as Redis does.
func (s *Session) UpsertExpire(key, value []byte, expireAt int64) error {
	if s.closed || s.st.closed.Load() {
		return ErrClosed
	}
	if expireAt != 0 && expireAt <= s.now() {
		_, err := s.Delete(key)
		return err
	}
	if size := recordBytes(uint64(len(key)), uint64(len(value)), expireAt != 0); size > s.st.log.pageBytes {
		return tooLarge(len(key), len(value), expireAt != 0, s.st.log.pageBytes)
	}
	s.pumpChecks()
	// Bound the checks in flight (and the slots they hold): past
	// maxChecks, wait for some to settle.
	for s.checking >= maxChecks {
		s.waitNotify()
		s.pumpChecks()
	}
	_, err := s.write(key, s.st.hash(key), false, true, func(found) ([]byte, int64, Op, error) { return value, expireAt, Put, nil })
	s.pumpChecks() // submit this upsert's check, if it needs one
	return err
}

// Delete writes a tombstone for key if it exists; existed reports whether
// it was live (a key whose time has passed is reclaimed, and did not
// exist). Finding out may read the device, synchronously.
func (s *Session) Delete(key []byte) (existed bool, err error) {
	if s.closed || s.st.closed.Load() {
		return false, ErrClosed
	}
	s.pumpChecks()
	f, err := s.write(key, s.st.hash(key), false, false, func(found) ([]byte, int64, Op, error) { return nil, 0, Remove, nil })
	return f.live, err
}

// RMW reads key's current value (synchronously, from memory or the device),
// calls fn(old, exists, dst) and writes fn's result, which it returns (valid
// until the session's next call). The key keeps its expiry time. fn runs
// with the key's index bucket latched, so it must be quick; its error
// aborts without writing and is returned.
func (s *Session) RMW(key []byte, fn func(old []byte, exists bool, dst []byte) ([]byte, error)) ([]byte, error) {
	if s.closed || s.st.closed.Load() {
		return nil, ErrClosed
	}
	var out []byte
	s.pumpChecks()
	_, err := s.write(key, s.st.hash(key), true, false, func(f found) ([]byte, int64, Op, error) {
		v, err := fn(s.old, f.live, s.next[:0])
		if err != nil {
			return nil, 0, Keep, err
		}
		s.next = v
		out = v
		if !f.live {
			return v, 0, Put, nil
		}
		return v, f.expireAt, Put, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Modify reads key's state (synchronously; its value too with wantValue),
// calls fn with it and does what fn decides, all with the key's index bucket latched: fn must be
// quick, and no other writer of the key can come between the read and the
// write. fn's error aborts without writing and is returned. A Put with an
// expiry time already past removes the key instead.
func (s *Session) Modify(key []byte, wantValue bool, fn func(e Entry) (Change, error)) error {
	if s.closed || s.st.closed.Load() {
		return ErrClosed
	}
	s.pumpChecks()
	_, err := s.write(key, s.st.hash(key), wantValue, false, func(f found) ([]byte, int64, Op, error) {
		e := Entry{Live: f.live}
		if f.live {
			e.ExpireAt = f.expireAt
			if wantValue {
				e.Value = s.old
			}
		}
		ch, err := fn(e)
		if err != nil {
			return nil, 0, Keep, err
		}
		if ch.Op == Put && ch.ExpireAt != 0 && ch.ExpireAt <= s.now() {
			return nil, 0, Remove, nil
		}
		return ch.Value, ch.ExpireAt, ch.Op, nil
	})
	return err
}

// Lookup returns key's state, reading the device synchronously if it has
// to; e.Value is valid until the session's next call. A key whose time has
// passed is reclaimed, as by Read.
func (s *Session) Lookup(key []byte) (Entry, error) {
	st := s.st
	if s.closed || st.closed.Load() {
		return Entry{}, ErrClosed
	}
	s.pumpChecks()
	h := st.hash(key)
	f, addr, err := s.lookupAt(key, st.ix.find(h, st.log.begin.Load()))
	if err != nil || !f.present {
		return Entry{}, err
	}
	if !f.live {
		return Entry{}, s.reclaim(key, h, addr)
	}
	return Entry{Live: true, ExpireAt: f.expireAt, Value: s.old}, nil
}

// lookupAt is lookupSync that also returns the address of the record it
// found, with the value in s.old.
func (s *Session) lookupAt(key []byte, addr uint64) (found, uint64, error) {
	st := s.st
	begin := st.log.begin.Load()
	for addr >= begin {
		k, h, err := s.recordAt(addr, s.keyA[:0], true)
		s.keyA = k
		if err != nil {
			return found{}, 0, err
		}
		if bytes.Equal(k, key) {
			return s.foundOf(&h), addr, nil
		}
		addr = h.prev
	}
	return found{}, 0, nil
}
