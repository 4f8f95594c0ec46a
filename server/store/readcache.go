package store

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/tierbench/tierbench/internal/cacheline"
)

// readCache keeps copies of records read from the device, keyed by their
// log address, in a memory budget of its own (Config.ReadCacheBytes); see
// the package doc for why it sits beside the log rather than in front of
// it.
//
// It is set-associative: the budget is cut into sets of rcSetBytes, an
// address belongs to one set (a hash of it), and each set is a slotted
// page behind a latch word, like an index bucket's:
//
//	word 0:      the state: latch (bit 63) | records (bits 0-7) |
//	             record bytes (8-21) | lookups since the last ageing
//	             (22-32) | hits among them (33-43)
//	words 1-9:   a one-byte tag per record (hash bits of its address),
//	             in directory order: up to rcMaxRecords records
//	words 10-15: hits, misses (folded in from the state at each ageing),
//	             admissions, evictions, invalidations, refusals
//	words 16-47: the set's frequency sketch: 512 four-bit counters
//	words 48-:   the directory, one word per record, oldest first:
//	             address (bits 0-47) | offset/8 in the set (48-57) |
//	             frequency (60-63)
//
// and the records themselves, exactly as the log holds them, packed from
// the set's end downwards in directory order. Everything is plain words in
// one array: no Go pointer for the collector to scan.
//
// A hit touches the state's line (the latch, the tags of the first 56
// records and the lookup counts), one directory word and the record's
// lines, and writes nothing else: the sketch and the counters' words are
// touched by misses, admissions and ageing only. (The first design counted
// every lookup in the sketch, four counters on up to four lines, walked
// the directory comparing addresses and summing sizes to find the
// record's offset, and added to a hit counter atomically: about ten lines
// and three atomic instructions per hit; see
// docs/notes/2026-12-06-read-cache-2.md.)
//
// The policy is TinyLFU over each set. A miss counts in the set's
// count-min sketch (conservative update); a hit counts in its record's
// directory word, an exact count for as long as the record is cached. A
// device read offers its record, which takes free space if there is any
// and otherwise replaces the set's least frequent record only when the
// sketch says the newcomer is more frequent. Every rcAgeAccesses lookups
// the sketch and the directory's frequencies are halved, so that old
// popularity fades. A scan's records, each read once, never beat the hot
// set's, so a scan passes through without evicting it; a key read again
// and again climbs in the sketch until it is admitted.
//
// Every operation on a set holds its latch, readers included (they copy a
// value the next admission may move): sets are many and each is held for
// a tag match and one copy, so two sessions rarely meet on one. Every word
// but the state is read and written under the latch only, so none needs
// an atomic instruction; Stats takes each set's latch in turn.
type readCache struct {
	words []uint64
	bytes []byte // words, as bytes
	sets  uint64
}

const (
	rcSetBytes     = 8192
	rcSetWords     = rcSetBytes / 8
	rcTagStart     = 1
	rcMaxRecords   = 72 // tags in words 1-9
	rcCountStart   = 10
	rcSketchStart  = 16
	rcSketchWords  = 32
	rcDirStart     = rcSketchStart + rcSketchWords
	rcCounters     = rcSketchWords * 16
	rcAgeAccesses  = 16 * 64
	rcMaxFrequency = 15

	// rcMaxRecordBytes is the largest record the cache takes: a quarter
	// of a set, so that a set always holds a few.
	rcMaxRecordBytes = (rcSetBytes - rcDirStart*8) / 4

	// rcSetRecordBytes is what a set holds of the budget: the records
	// that fit in it at the reference's 128 B, 57 of them beside their
	// directory words and the set's meta words and sketch. The budget
	// counts records, as the log's --memory does; the cache's own
	// bookkeeping comes on top (ReadCacheStats.Bytes says how much).
	// Records of 96 B or less are held to rcMaxRecords a set (75 would
	// fit), so that the cache holds fewer bytes of them than its budget.
	rcSetRecordBytes = (rcSetBytes - rcDirStart*8) / (128 + 8) * 128

	// MinReadCacheBytes is the smallest read cache: one set.
	MinReadCacheBytes = rcSetRecordBytes
)

// The state word's fields.
const (
	rcNMask     = 0xff
	rcUsedShift = 8
	rcUsedMask  = 0x3fff
	rcAccShift  = 22
	rcHitShift  = 33
	rcLookMask  = 0x7ff // lookups and hits since the last ageing: at most rcAgeAccesses
	rcOffShift  = 48    // of a directory word's offset/8
)

// Indices of the counter words.
const (
	rcHits = rcCountStart + iota
	rcMisses
	rcAdmissions
	rcEvictions
	rcInvalidations
	rcRefusals
)

// ReadCacheStats are the read cache's counters (all zero when it is off).
type ReadCacheStats struct {
	// Bytes is the memory it allocated for its budget: records,
	// directories and sketches.
	Bytes       int64 `json:"bytes"`
	RecordBytes int64 `json:"record_bytes"` // bytes of the records it holds
	Records     int64 `json:"records"`
	// Hits and Misses are lookups of a device address that found its
	// record, or not.
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// Admissions are records it took from device reads; Evictions,
	// records it dropped for a more frequent one; Invalidations, records
	// it dropped because a write replaced them.
	Admissions    int64 `json:"admissions"`
	Evictions     int64 `json:"evictions"`
	Invalidations int64 `json:"invalidations"`
	// Refusals are device reads it did not take: the set was full of
	// records at least as frequent.
	Refusals int64 `json:"refusals"`
}

func newReadCache(budget int64) *readCache {
	sets := uint64((budget + rcSetRecordBytes - 1) / rcSetRecordBytes)
	words := make([]uint64, sets*rcSetWords)
	adviseHugePages(words)
	return &readCache{
		words: words,
		bytes: unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8),
		sets:  sets,
	}
}

// rcMix scatters an address's bits (splitmix64's finaliser): log addresses
// are multiples of 8 and close together.
func rcMix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// set returns the words of the set for hash hs, and its first byte's
// offset in rc.bytes.
func (rc *readCache) set(hs uint64) ([]uint64, uint64) {
	i := (hs & 0xffffffff) * rc.sets >> 32
	base := i * rcSetWords
	return rc.words[base : base+rcSetWords : base+rcSetWords], base * 8
}

// rcLock takes the set's latch and returns its state (latch clear), which
// the holder keeps and hands back to rcUnlock.
func rcLock(w []uint64) uint64 {
	for spins := 0; ; spins++ {
		s := atomic.LoadUint64(&w[0])
		if s&latchBit == 0 && atomic.CompareAndSwapUint64(&w[0], s, s|latchBit) {
			return s
		}
		if spins > 16 {
			runtime.Gosched()
		}
	}
}

// rcUnlock stores state s (latch clear), releasing the latch.
func rcUnlock(w []uint64, s uint64) { atomic.StoreUint64(&w[0], s) }

// rcShape is state s's record count and record bytes.
func rcShape(s uint64) (n, used uint64) { return s & rcNMask, s >> rcUsedShift & rcUsedMask }

// rcWithShape is state s with another shape.
func rcWithShape(s, n, used uint64) uint64 {
	return s&^(rcNMask|rcUsedMask<<rcUsedShift) | n | used<<rcUsedShift
}

// rcTagOf is the one-byte tag of an address hashed to hs: bits the set's
// index (the low 32) does not use.
func rcTagOf(hs uint64) uint64 { return hs >> 40 & 0xff }

func rcTag(w []uint64, i uint64) uint64 { return w[rcTagStart+i/8] >> (i % 8 * 8) & 0xff }

func rcSetTag(w []uint64, i, tag uint64) {
	sh := i % 8 * 8
	w[rcTagStart+i/8] = w[rcTagStart+i/8]&^(0xff<<sh) | tag<<sh
}

// rcSketchHash is the hash whose four 9-bit fields place an address in its
// set's sketch: a second mix, since the set index came from the first.
func rcSketchHash(hs uint64) uint64 { return rcMix(hs ^ 0x9e3779b97f4a7c15) }

// rcCounterAt is counter j of sketch hash h2.
func rcCounterAt(h2 uint64, j uint) uint64 { return h2 >> (9 * j) & (rcCounters - 1) }

func rcCounter(w []uint64, c uint64) uint64 {
	return w[rcSketchStart+c/16] >> (c % 16 * 4) & 0xf
}

// rcEstimate is the sketch's count for hs: the least of its counters.
func rcEstimate(w []uint64, h2 uint64) uint64 {
	est := uint64(rcMaxFrequency)
	for j := uint(0); j < 4; j++ {
		est = min(est, rcCounter(w, rcCounterAt(h2, j)))
	}
	return est
}

// rcTouch counts one miss of hs in its set's sketch, raising only the
// counters at the minimum (which keeps the estimates of rare addresses
// low).
func rcTouch(w []uint64, h2 uint64) {
	est := rcEstimate(w, h2)
	if est >= rcMaxFrequency {
		return
	}
	for j := uint(0); j < 4; j++ {
		if c := rcCounterAt(h2, j); rcCounter(w, c) == est {
			w[rcSketchStart+c/16] += 1 << (c % 16 * 4)
		}
	}
}

// rcCounted counts one lookup, a hit or not, in state s, and every
// rcAgeAccesses lookups folds the lookup counts into the counter words and
// halves the sketch and the directory's frequencies. It returns the new
// state.
func rcCounted(w []uint64, s uint64, hit bool) uint64 {
	s += 1 << rcAccShift
	if hit {
		s += 1 << rcHitShift
	}
	looks := s >> rcAccShift & rcLookMask
	if looks < rcAgeAccesses {
		return s
	}
	hits := s >> rcHitShift & rcLookMask
	w[rcHits] += hits
	w[rcMisses] += looks - hits
	s &^= rcLookMask<<rcAccShift | rcLookMask<<rcHitShift
	for i := rcSketchStart; i < rcDirStart; i++ {
		w[i] = w[i] >> 1 & 0x7777777777777777
	}
	n, _ := rcShape(s)
	for i := uint64(0); i < n; i++ {
		d := w[rcDirStart+i]
		w[rcDirStart+i] = d&^(0xf<<60) | (d>>61)<<60
	}
	return s
}

// rcOffset is the offset from the set's start of directory word d's
// record.
func rcOffset(d uint64) uint64 { return (d >> rcOffShift & 0x3ff) * 8 }

// rcFind returns the directory index of addr in the set whose state is s,
// or ok false. It compares the tags eight at a time and reads the
// directory word of a matching tag only.
func rcFind(w []uint64, s, addr, tag uint64) (i uint64, ok bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	n, _ := rcShape(s)
	pat := tag * ones
	for j := uint64(0); j*8 < n; j++ {
		x := w[rcTagStart+j] ^ pat
		// A byte of x is zero where the tag matches; the expression marks
		// every zero byte (and may mark a byte above one, which the
		// directory word then rejects).
		m := (x - ones) &^ x & highs
		if left := n - j*8; left < 8 {
			m &= 1<<(left*8) - 1
		}
		for ; m != 0; m &= m - 1 {
			i = j*8 + uint64(bits.TrailingZeros64(m))/8
			if w[rcDirStart+i]&addressMask == addr {
				return i, true
			}
		}
	}
	return 0, false
}

// appendLines appends to lines the addresses of the lines a lookup of addr
// touches before the record: the set's state and tags, and the directory
// words of as many records as a set of the reference's 128 B records
// holds (57: eight lines). It reads nothing (a prefetch never faults and
// needs no latch).
func (rc *readCache) appendLines(lines []uintptr, addr uint64) []uintptr {
	w, _ := rc.set(rcMix(addr))
	lines = append(lines, uintptr(unsafe.Pointer(&w[0])))
	for i := rcDirStart; i < rcDirStart+rcSetBytes/(128+8); i += 8 {
		lines = append(lines, uintptr(unsafe.Pointer(&w[i])))
	}
	return lines
}

// appendRecordLines appends to lines the addresses of the first two lines
// of the record cached at addr (a 128 B record packed from a set's end has
// no others), if it is cached. It takes the set's latch to read the
// directory, and counts nothing: the lookup that follows does.
func (rc *readCache) appendRecordLines(lines []uintptr, addr uint64) []uintptr {
	hs := rcMix(addr)
	w, base := rc.set(hs)
	s := rcLock(w)
	if i, ok := rcFind(w, s, addr, rcTagOf(hs)); ok {
		p := uintptr(unsafe.Pointer(&rc.bytes[base+rcOffset(w[rcDirStart+i])]))
		lines = append(lines, p, p+cacheline.Bytes)
	}
	rcUnlock(w, s)
	return lines
}

// lookup finds the record at addr. memMatch: it is key's, decoded into *h,
// with its value appended to dst[:0] unless it is a tombstone; memOther:
// another key's (follow h.prev); memGone: not cached. A hit counts in the
// record's directory word, a miss in the set's sketch.
func (rc *readCache) lookup(addr uint64, key, dst []byte, h *header) ([]byte, memOutcome) {
	hs := rcMix(addr)
	w, base := rc.set(hs)
	s := rcLock(w)
	i, ok := rcFind(w, s, addr, rcTagOf(hs))
	if !ok {
		rcTouch(w, rcSketchHash(hs))
		rcUnlock(w, rcCounted(w, s, false))
		return dst, memGone
	}
	d := w[rcDirStart+i]
	if d>>60 < rcMaxFrequency {
		w[rcDirStart+i] = d + 1<<60
	}
	rec := rc.bytes[base+rcOffset(d) : base+rcSetBytes]
	h.decode(rec)
	h.readExpiry(rec)
	k := h.metaBytes()
	out := memOther
	if string(rec[k:k+h.keyBytes]) == string(key) {
		out = memMatch
		if !h.tombstone {
			v := k + h.keyBytes
			dst = append(dst[:0], rec[v:v+h.valueBytes]...)
		}
	}
	rcUnlock(w, rcCounted(w, s, true))
	return dst, out
}

// admit offers the record rec, read from the device at addr. It takes free
// space, or replaces less frequent records; otherwise it refuses.
func (rc *readCache) admit(addr uint64, rec []byte) {
	size := uint64(len(rec))
	if size > rcMaxRecordBytes || size&7 != 0 {
		return
	}
	hs := rcMix(addr)
	w, base := rc.set(hs)
	s := rcLock(w)
	tag := rcTagOf(hs)
	if _, ok := rcFind(w, s, addr, tag); ok {
		rcUnlock(w, s) // another session's read of it got here first
		return
	}
	freq := rcEstimate(w, rcSketchHash(hs))
	for {
		n, used := rcShape(s)
		if n < rcMaxRecords && (rcDirStart+n+1)*8+used+size <= rcSetBytes {
			break
		}
		v, vf := rcVictim(w, n)
		if vf >= freq {
			w[rcRefusals]++
			rcUnlock(w, s)
			return
		}
		s = rc.remove(w, base, s, v)
		w[rcEvictions]++
	}
	n, used := rcShape(s)
	at := rcSetBytes - used - size
	copy(rc.bytes[base+at:base+at+size], rec)
	w[rcDirStart+n] = addr | at/8<<rcOffShift | freq<<60
	rcSetTag(w, n, tag)
	w[rcAdmissions]++
	rcUnlock(w, rcWithShape(s, n+1, used+size))
}

// rcVictim is the directory index of the set's least frequent record, the
// oldest of those that tie, and its frequency.
func rcVictim(w []uint64, n uint64) (v, freq uint64) {
	freq = rcMaxFrequency + 1
	for i := uint64(0); i < n; i++ {
		if f := w[rcDirStart+i] >> 60; f < freq {
			v, freq = i, f
			if f == 0 {
				break
			}
		}
	}
	return v, freq
}

// remove drops directory entry i of the set at base, whose state is s,
// closing the gaps in the directory, the tags and the records (the later
// entries' records, below entry i's, move up by its size), and returns the
// new state.
func (rc *readCache) remove(w []uint64, base, s, i uint64) uint64 {
	n, used := rcShape(s)
	off := rcOffset(w[rcDirStart+i])
	var h header
	h.decode(rc.bytes[base+off:])
	size := h.size()
	lo := base + rcSetBytes - used
	copy(rc.bytes[lo+size:base+off+size], rc.bytes[lo:base+off])
	for j := i + 1; j < n; j++ {
		w[rcDirStart+j-1] = w[rcDirStart+j] + size/8<<rcOffShift
		rcSetTag(w, j-1, rcTag(w, j))
	}
	w[rcDirStart+n-1] = 0
	rcSetTag(w, n-1, 0)
	return rcWithShape(s, n-1, used-size)
}

// invalidate drops the record at addr if it is key's: a write has just
// made a newer record of key its chain's head, so the copy can never be
// read again. (Correctness does not depend on it: a reader reaches an
// address only through the index, which names the newest record first.)
func (rc *readCache) invalidate(addr uint64, key []byte) {
	hs := rcMix(addr)
	w, base := rc.set(hs)
	s := rcLock(w)
	if i, ok := rcFind(w, s, addr, rcTagOf(hs)); ok {
		rec := rc.bytes[base+rcOffset(w[rcDirStart+i]) : base+rcSetBytes]
		var h header
		h.decode(rec)
		k := h.metaBytes()
		if string(rec[k:k+h.keyBytes]) == string(key) {
			s = rc.remove(w, base, s, i)
			w[rcInvalidations]++
		}
	}
	rcUnlock(w, s)
}

// clear drops every record (FlushAll): their addresses are below the new
// BeginAddress and can never be read again.
func (rc *readCache) clear() {
	for i := uint64(0); i < rc.sets; i++ {
		w := rc.words[i*rcSetWords : (i+1)*rcSetWords]
		s := rcLock(w)
		n, _ := rcShape(s)
		clear(w[rcDirStart : rcDirStart+n])
		clear(w[rcTagStart:rcCountStart])
		rcUnlock(w, rcWithShape(s, 0, 0))
	}
}

// stats sums the sets' counters, taking each set's latch in turn.
func (rc *readCache) stats() ReadCacheStats {
	st := ReadCacheStats{Bytes: int64(len(rc.bytes))}
	for i := uint64(0); i < rc.sets; i++ {
		w := rc.words[i*rcSetWords : (i+1)*rcSetWords]
		s := rcLock(w)
		n, used := rcShape(s)
		looks, hits := s>>rcAccShift&rcLookMask, s>>rcHitShift&rcLookMask
		st.Records += int64(n)
		st.RecordBytes += int64(used)
		st.Hits += int64(w[rcHits] + hits)
		st.Misses += int64(w[rcMisses] + looks - hits)
		st.Admissions += int64(w[rcAdmissions])
		st.Evictions += int64(w[rcEvictions])
		st.Invalidations += int64(w[rcInvalidations])
		st.Refusals += int64(w[rcRefusals])
		rcUnlock(w, s)
	}
	return st
}
