package store

import (
	"runtime"
	"sync/atomic"
	"unsafe"
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
//	word 0:      latch (bit 63) | records (bits 0-15) | record bytes (bits 16-31)
//	word 1:      accesses since the set's sketch was last halved
//	words 2-7:   hits, misses, admissions, evictions, invalidations, refusals
//	words 8-39:  the set's frequency sketch: 512 four-bit counters
//	words 40-:   the directory, one word per record, oldest first:
//	             address (bits 0-47) | size/8 (bits 48-59) | frequency (60-63)
//
// and the records themselves, exactly as the log holds them, packed from
// the set's end downwards in directory order. Everything is plain words in
// one array: no Go pointer for the collector to scan.
//
// The policy is TinyLFU over each set: every lookup of an address, hit or
// miss, counts in the set's count-min sketch (conservative update, halved
// every rcAgeAccesses lookups so that old popularity fades); a device read
// offers its record, which takes free space if there is any and otherwise
// replaces the set's least frequent record only when the sketch says the
// newcomer is more frequent. A scan's records, each read once, never beat
// the hot set's, so a scan passes through without evicting it; a key read
// again and again climbs in the sketch until it is admitted.
//
// Every operation on a set holds its latch, readers included (they copy a
// value the next admission may move): sets are many and each is held for
// a directory walk and one copy, so two sessions rarely meet on one. The
// counters that Stats sums are added atomically under the latch so that
// Stats can read them without it.
type readCache struct {
	words []uint64
	bytes []byte // words, as bytes
	sets  uint64
}

const (
	rcSetBytes     = 8192
	rcSetWords     = rcSetBytes / 8
	rcSketchWords  = 32
	rcSketchStart  = 8
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
	rcSetRecordBytes = (rcSetBytes - rcDirStart*8) / (128 + 8) * 128

	// MinReadCacheBytes is the smallest read cache: one set.
	MinReadCacheBytes = rcSetRecordBytes
)

// Indices of the meta words.
const (
	rcState = iota
	rcAccesses
	rcHits
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

func rcLock(w []uint64) {
	for spins := 0; ; spins++ {
		s := atomic.LoadUint64(&w[rcState])
		if s&latchBit == 0 && atomic.CompareAndSwapUint64(&w[rcState], s, s|latchBit) {
			return
		}
		if spins > 16 {
			runtime.Gosched()
		}
	}
}

func rcUnlock(w []uint64) { atomic.StoreUint64(&w[rcState], atomic.LoadUint64(&w[rcState])&^latchBit) }

// rcShape is a set's record count and record bytes; the latch must be held.
func rcShape(w []uint64) (n, used uint64) {
	s := atomic.LoadUint64(&w[rcState])
	return s & 0xffff, s >> 16 & 0xffff
}

// rcSetShape stores a set's shape, keeping the latch.
func rcSetShape(w []uint64, n, used uint64) {
	atomic.StoreUint64(&w[rcState], latchBit|n|used<<16)
}

func rcCount(w []uint64, i int) { atomic.AddUint64(&w[i], 1) }

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

// rcTouch counts one access to hs in its set's sketch (raising only the
// counters at the minimum, which keeps the estimates of rare addresses
// low) and returns the new estimate. Every rcAgeAccesses accesses it
// halves the sketch and the directory's frequencies.
func rcTouch(w []uint64, h2 uint64) uint64 {
	est := rcEstimate(w, h2)
	if est < rcMaxFrequency {
		for j := uint(0); j < 4; j++ {
			if c := rcCounterAt(h2, j); rcCounter(w, c) == est {
				w[rcSketchStart+c/16] += 1 << (c % 16 * 4)
			}
		}
		est++
	}
	if w[rcAccesses]++; w[rcAccesses] >= rcAgeAccesses {
		w[rcAccesses] = 0
		for i := rcSketchStart; i < rcDirStart; i++ {
			w[i] = w[i] >> 1 & 0x7777777777777777
		}
		n, _ := rcShape(w)
		for i := uint64(0); i < n; i++ {
			d := w[rcDirStart+i]
			w[rcDirStart+i] = d&^(0xf<<60) | (d>>61)<<60
		}
	}
	return est
}

// rcEntrySize is the record bytes of directory word d.
func rcEntrySize(d uint64) uint64 { return (d >> 48 & 0xfff) * 8 }

// find returns the directory index of addr in the set and the offset of
// its record from the set's start, or ok false.
func rcFind(w []uint64, addr uint64) (i, off uint64, ok bool) {
	n, _ := rcShape(w)
	end := uint64(rcSetBytes)
	for i = 0; i < n; i++ {
		d := w[rcDirStart+i]
		end -= rcEntrySize(d)
		if d&addressMask == addr {
			return i, end, true
		}
	}
	return 0, 0, false
}

// lookup finds the record at addr. memMatch: it is key's, decoded into *h,
// with its value appended to dst[:0] unless it is a tombstone; memOther:
// another key's (follow h.prev); memGone: not cached. The lookup counts in
// the set's sketch, hit or miss.
func (rc *readCache) lookup(addr uint64, key, dst []byte, h *header) ([]byte, memOutcome) {
	hs := rcMix(addr)
	w, base := rc.set(hs)
	rcLock(w)
	freq := rcTouch(w, rcSketchHash(hs))
	i, off, ok := rcFind(w, addr)
	if !ok {
		rcCount(w, rcMisses)
		rcUnlock(w)
		return dst, memGone
	}
	d := w[rcDirStart+i]
	w[rcDirStart+i] = d&^(0xf<<60) | freq<<60
	rec := rc.bytes[base+off : base+off+rcEntrySize(d)]
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
	rcCount(w, rcHits)
	rcUnlock(w)
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
	rcLock(w)
	defer rcUnlock(w)
	if _, _, ok := rcFind(w, addr); ok {
		return // another session's read of it got here first
	}
	freq := rcEstimate(w, rcSketchHash(hs))
	for {
		n, used := rcShape(w)
		if (rcDirStart+n+1)*8+used+size <= rcSetBytes {
			break
		}
		v, vf := rcVictim(w, n)
		if vf >= freq {
			rcCount(w, rcRefusals)
			return
		}
		rc.remove(w, base, v)
		rcCount(w, rcEvictions)
	}
	n, used := rcShape(w)
	at := base + rcSetBytes - used - size
	copy(rc.bytes[at:at+size], rec)
	w[rcDirStart+n] = addr | size/8<<48 | freq<<60
	rcSetShape(w, n+1, used+size)
	rcCount(w, rcAdmissions)
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

// remove drops directory entry i of the set at base, closing the gaps in
// the directory and in the records.
func (rc *readCache) remove(w []uint64, base, i uint64) {
	n, used := rcShape(w)
	var before uint64 // bytes of the records of entries 0..i
	for j := uint64(0); j <= i; j++ {
		before += rcEntrySize(w[rcDirStart+j])
	}
	size := rcEntrySize(w[rcDirStart+i])
	lo, hi := base+rcSetBytes-used, base+rcSetBytes-before
	copy(rc.bytes[lo+size:hi+size], rc.bytes[lo:hi])
	copy(w[rcDirStart+i:rcDirStart+n-1], w[rcDirStart+i+1:rcDirStart+n])
	w[rcDirStart+n-1] = 0
	rcSetShape(w, n-1, used-size)
}

// invalidate drops the record at addr if it is key's: a write has just
// made a newer record of key its chain's head, so the copy can never be
// read again. (Correctness does not depend on it: a reader reaches an
// address only through the index, which names the newest record first.)
func (rc *readCache) invalidate(addr uint64, key []byte) {
	hs := rcMix(addr)
	w, base := rc.set(hs)
	rcLock(w)
	defer rcUnlock(w)
	i, off, ok := rcFind(w, addr)
	if !ok {
		return
	}
	rec := rc.bytes[base+off : base+off+rcEntrySize(w[rcDirStart+i])]
	var h header
	h.decode(rec)
	k := h.metaBytes()
	if string(rec[k:k+h.keyBytes]) == string(key) {
		rc.remove(w, base, i)
		rcCount(w, rcInvalidations)
	}
}

// clear drops every record (FlushAll): their addresses are below the new
// BeginAddress and can never be read again.
func (rc *readCache) clear() {
	for s := uint64(0); s < rc.sets; s++ {
		w := rc.words[s*rcSetWords : (s+1)*rcSetWords]
		rcLock(w)
		n, _ := rcShape(w)
		clear(w[rcDirStart : rcDirStart+n])
		rcSetShape(w, 0, 0)
		rcUnlock(w)
	}
}

// stats sums the sets' counters, without their latches.
func (rc *readCache) stats() ReadCacheStats {
	st := ReadCacheStats{Bytes: int64(len(rc.bytes))}
	for s := uint64(0); s < rc.sets; s++ {
		w := rc.words[s*rcSetWords : (s+1)*rcSetWords]
		state := atomic.LoadUint64(&w[rcState])
		st.Records += int64(state & 0xffff)
		st.RecordBytes += int64(state >> 16 & 0xffff)
		st.Hits += int64(atomic.LoadUint64(&w[rcHits]))
		st.Misses += int64(atomic.LoadUint64(&w[rcMisses]))
		st.Admissions += int64(atomic.LoadUint64(&w[rcAdmissions]))
		st.Evictions += int64(atomic.LoadUint64(&w[rcEvictions]))
		st.Invalidations += int64(atomic.LoadUint64(&w[rcInvalidations]))
		st.Refusals += int64(atomic.LoadUint64(&w[rcRefusals]))
	}
	return st
}
