package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
)

// A scan walks the log, not the index: records in address order, the part
// below HeadAddress read from the device in windows of up to
// scanWindowBytes (one sequential read serves many records), the rest from
// the page frames. At its first call a scan fixes an end bound E at or a
// little above the tail, and it stops there (or at the tail, if lower)
// even while writers append. At a record r of key K it returns K when r is
// K's newest record, or when K's newest record is at or above E (written
// after the scan began) and K is live. So a key present for the whole scan
// is returned at least once: when the scan reaches K's newest record below
// E, K's newest record is either that one or one at or above E. A key that
// is never rewritten during the scan is returned exactly once; one that is
// may come back once for each of its records the scan meets below E (Redis
// allows a SCAN to return a key more than once); a key created during the
// scan may or may not be returned. Deciding reads only index entries and,
// for a key rewritten since r, the records of its chain above r up to its
// first one (one read, unless other keys share its index tag). The cursor
// carries the position and E, so a scan needs no state in the server.
//
// Cursor bits: 0-44 the position in 8-byte units (addresses below 2^48),
// 45-56 and 57-62 a 12-bit mantissa and 6-bit exponent of E, rounded up
// (E ≥ the tail at the first call, within 1/4096 of it). Cursor 0 starts a
// scan, and a scan's last call returns 0.
const (
	cursorPosBits   = 45
	cursorMantBits  = 12
	scanWindowBytes = 1 << 20
)

// ErrCursor is the error for a scan cursor no scan could have returned.
var ErrCursor = errors.New("store: invalid scan cursor")

func encodeCursor(pos, end uint64) uint64 {
	e := uint64(0)
	for (end+(1<<e)-1)>>e >= 1<<cursorMantBits {
		e++
	}
	m := (end + (1 << e) - 1) >> e
	return pos>>3 | m<<cursorPosBits | e<<(cursorPosBits+cursorMantBits)
}

func decodeCursor(c uint64) (pos, end uint64, ok bool) {
	pos = (c & (1<<cursorPosBits - 1)) << 3
	m := c >> cursorPosBits & (1<<cursorMantBits - 1)
	e := c >> (cursorPosBits + cursorMantBits)
	if e > 48 || c>>63 != 0 {
		return 0, 0, false
	}
	return pos, m << e, true
}

// Scan continues the scan at cursor (0 to start one): it calls fn with each
// key it returns (valid only during fn), at most about count of them, and
// returns the cursor of the next call, 0 when the scan is complete. A key
// found expired is reclaimed. It may read the device, synchronously.
func (s *Session) Scan(cursor uint64, count int, fn func(key []byte)) (uint64, error) {
	st := s.st
	l := st.log
	if s.closed || st.closed.Load() {
		return 0, ErrClosed
	}
	s.pumpChecks()
	var pos, end uint64
	if cursor == 0 {
		pos, end = l.begin.Load(), l.tail.Load()
		if pos >= end {
			return 0, nil
		}
		_, end, _ = decodeCursor(encodeCursor(pos, end))
	} else {
		var ok bool
		if pos, end, ok = decodeCursor(cursor); !ok {
			return 0, ErrCursor
		}
	}
	count = max(count, 1)
	budget := 10*count + 64 // records examined, garbage included (Redis visits up to 10 × COUNT buckets)
	emitted := 0
	for emitted < count && budget > 0 {
		pos = max(pos, l.begin.Load())
		if limit := min(end, l.tail.Load()); pos >= limit {
			return 0, nil
		}
		if pos&l.pageMask+headerBytes > l.pageBytes {
			pos = (pos>>l.pageShift + 1) << l.pageShift
			continue
		}
		h, key, next, err := s.scanRecord(pos)
		if err != nil {
			return 0, err
		}
		if next == pos {
			break // not written yet: the next call resumes here
		}
		budget--
		if key != nil {
			ok, err := s.scanWants(key, pos, end, h)
			if err != nil {
				return 0, err
			}
			if ok {
				fn(key)
				emitted++
			}
		}
		pos = next
	}
	if pos >= min(end, l.tail.Load()) {
		return 0, nil
	}
	return encodeCursor(pos, end), nil
}

// scanRecord reads the record at pos and returns its header, its key
// (copied to s.keyA; nil for a tombstone or a page's unused end) and the
// address after it, or pos itself when the record is not written yet.
func (s *Session) scanRecord(pos uint64) (h header, key []byte, next uint64, err error) {
	l := s.st.log
	nextPage := (pos>>l.pageShift + 1) << l.pageShift
	if pos >= l.head.Load() {
		if page, f, ok := l.pin(pos); ok {
			defer l.unpin(f)
			off := pos & l.pageMask
			w0 := leWord(atomic.LoadUint64(word0(page[off:])))
			switch {
			case w0 == 0:
				return h, nil, pos, nil
			case w0&fillerBit != 0:
				return h, nil, nextPage, nil
			}
			h = readHeader(page[off:])
			if err := l.checkRecord(pos, h); err != nil {
				return h, nil, pos, err
			}
			h.readExpiry(page[off:])
			if h.tombstone {
				return h, nil, pos + h.size(), nil
			}
			k := off + h.metaBytes()
			s.keyA = append(s.keyA[:0], page[k:k+h.keyBytes]...)
			return h, s.keyA, pos + h.size(), nil
		}
	}
	if s.st.dev == nil {
		return h, nil, pos, fmt.Errorf("%w: address %d is not in memory and there is no storage tier", errCorrupt, pos)
	}
	// Reuse the window of the previous call when it covers the record.
	w, start := s.scanWin, s.scanStart
	if pos < start || pos+headerBytes > start+uint64(len(w)) {
		s.scanWin = nil // readInto may free the buffer it points into
		if w, start, err = s.readInto(&s.scanBuf, pos, scanWindowBytes); err != nil {
			return h, nil, pos, err
		}
	}
	if w0 := binary.LittleEndian.Uint64(w[pos-start:]); w0&fillerBit != 0 {
		return h, nil, nextPage, nil
	} else if w0&validBit == 0 {
		return h, nil, pos, fmt.Errorf("%w at address %d: no record header on the device (word 0 is %#x)", errCorrupt, pos, w0)
	}
	h, k, _, whole, err := l.decodeRecord(w, start, pos)
	if err != nil {
		return h, nil, pos, err
	}
	if !whole {
		s.scanWin = nil
		if w, start, err = s.readInto(&s.scanBuf, pos, max(h.size(), scanWindowBytes)); err != nil {
			return h, nil, pos, err
		}
		if h, k, _, whole, err = l.decodeRecord(w, start, pos); err != nil || !whole {
			return h, nil, pos, errors.Join(err, fmt.Errorf("%w at address %d: the record does not fit its read", errCorrupt, pos))
		}
	}
	s.scanWin, s.scanStart = w, start
	if h.tombstone {
		return h, nil, pos + h.size(), nil
	}
	s.keyA = append(s.keyA[:0], k...)
	return h, s.keyA, pos + h.size(), nil
}

// scanWants reports whether the scan returns key at its record at addr,
// whose header is h: when addr is key's newest record, or when key's
// newest record was written at or above end (after the scan began) while
// key is live; not when a newer record of key lies below end, which the
// scan returns instead. A key found expired is reclaimed. It reads the
// records above addr in key's chain up to the first one of key: none when
// addr heads it, one when key was rewritten.
func (s *Session) scanWants(key []byte, addr, end uint64, h header) (bool, error) {
	st := s.st
	hash := st.hash(key)
	now := s.now()
	x := st.ix.find(hash, st.log.begin.Load())
	for x > addr {
		k, hx, err := s.recordAt(x, s.keyB[:0], false)
		s.keyB = k
		if err != nil {
			return false, err
		}
		if bytes.Equal(k, key) {
			return x >= end && !hx.tombstone && !hx.expired(now), nil
		}
		x = hx.prev // another key of the same index tag
	}
	if x != addr {
		return false, nil // not in the chain: dropped by FlushAll
	}
	if h.expired(now) {
		return false, s.reclaim(key, hash, addr)
	}
	return true, nil
}
