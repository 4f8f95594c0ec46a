package store

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Index entry layout: tag (top 16 bits of the hash) | record address.
const (
	tagShift      = 48
	addressMask   = 1<<tagShift - 1
	entriesPerBkt = 7
	linkWord      = 7       // the bucket word holding the overflow link and the latch
	latchBit      = 1 << 63 // in the link word of a main bucket: a writer holds the bucket

	overflowChunkBuckets = 4096
	maxOverflowChunks    = 1 << 14 // 64 M overflow buckets
)

// overflowChunk is a block of overflow buckets: plain words, no pointers, so
// the garbage collector never scans it.
type overflowChunk [overflowChunkBuckets * 8]uint64

// index is the hash index: nBuckets main buckets in one flat array, plus
// overflow buckets numbered from 1 in chunks that are allocated on demand
// and never freed. All entry and link words are read and written
// atomically; the latch bit serialises the writers of one main bucket (and
// of its overflow chain, which only its latch holder extends).
type index struct {
	buckets []uint64
	mask    uint64

	overflowMu    sync.Mutex
	overflowCount atomic.Uint64 // overflow buckets handed out
	overflow      []atomic.Pointer[overflowChunk]
}

func newIndex(indexBytes int64) *index {
	n := uint64(indexBytes / bucketBytes)
	n = 1 << (63 - bits.LeadingZeros64(n)) // round down to a power of two
	buckets := make([]uint64, n*8)         // fresh from the OS: not yet touched
	adviseHugePages(buckets)
	return &index{
		buckets:  buckets,
		mask:     n - 1,
		overflow: make([]atomic.Pointer[overflowChunk], maxOverflowChunks),
	}
}

func (ix *index) bucketCount() int64 { return int64(ix.mask + 1) }

func (ix *index) mainBucket(h uint64) *[8]uint64 {
	b := (h & ix.mask) * 8
	return (*[8]uint64)(ix.buckets[b : b+8])
}

// overflowBucket returns overflow bucket ref (≥ 1).
func (ix *index) overflowBucket(ref uint64) *[8]uint64 {
	i := ref - 1
	chunk := ix.overflow[i/overflowChunkBuckets].Load()
	o := (i % overflowChunkBuckets) * 8
	return (*[8]uint64)(chunk[o : o+8])
}

// find returns the address in the entry for h's tag, or 0. Entries whose
// address is below begin were dropped by FlushAll and do not count.
func (ix *index) find(h, begin uint64) uint64 {
	tag := h >> tagShift
	b := ix.mainBucket(h)
	for {
		for i := 0; i < entriesPerBkt; i++ {
			e := atomic.LoadUint64(&b[i])
			if e != 0 && e>>tagShift == tag && e&addressMask >= begin {
				return e & addressMask
			}
		}
		next := atomic.LoadUint64(&b[linkWord]) &^ latchBit
		if next == 0 {
			return 0
		}
		b = ix.overflowBucket(next)
	}
}

// lock takes the writer latch of h's main bucket, spinning: latch holders
// never wait for another latch, so the wait is bounded by one writer's work.
func (ix *index) lock(h uint64) *[8]uint64 {
	b := ix.mainBucket(h)
	for spins := 0; ; spins++ {
		w := atomic.LoadUint64(&b[linkWord])
		if w&latchBit == 0 && atomic.CompareAndSwapUint64(&b[linkWord], w, w|latchBit) {
			return b
		}
		if spins > 16 {
			runtime.Gosched()
		}
	}
}

// unlock releases the latch taken by lock. Only the holder changes the link
// word while it is held, so a plain store of the current link is safe.
func (ix *index) unlock(b *[8]uint64) {
	atomic.StoreUint64(&b[linkWord], atomic.LoadUint64(&b[linkWord])&^latchBit)
}

// slotFor returns, with b's latch held, the entry word for h's tag and the
// address it holds (0 when the tag has no live entry: the word returned is
// then a free one, linking a new overflow bucket when the chain is full).
func (ix *index) slotFor(b *[8]uint64, h, begin uint64) (*uint64, uint64, error) {
	tag := h >> tagShift
	var free *uint64
	for {
		for i := 0; i < entriesPerBkt; i++ {
			e := atomic.LoadUint64(&b[i])
			switch {
			case e == 0 || e&addressMask < begin:
				if free == nil {
					free = &b[i]
				}
			case e>>tagShift == tag:
				return &b[i], e & addressMask, nil
			}
		}
		next := atomic.LoadUint64(&b[linkWord]) &^ latchBit
		if next == 0 {
			if free != nil {
				return free, 0, nil
			}
			ref, ok := ix.newOverflow()
			if !ok {
				return nil, 0, ErrIndexFull
			}
			nb := ix.overflowBucket(ref)
			// Publish the zeroed bucket; keep the latch bit if this is the
			// main bucket's link word.
			atomic.StoreUint64(&b[linkWord], atomic.LoadUint64(&b[linkWord])&latchBit|ref)
			return &nb[0], 0, nil
		}
		b = ix.overflowBucket(next)
	}
}

// newOverflow hands out a zeroed overflow bucket, or false when the pool
// (sized far beyond any useful chain length) is exhausted.
func (ix *index) newOverflow() (uint64, bool) {
	ix.overflowMu.Lock()
	defer ix.overflowMu.Unlock()
	n := ix.overflowCount.Load()
	c := n / overflowChunkBuckets
	if c >= maxOverflowChunks {
		return 0, false
	}
	if ix.overflow[c].Load() == nil {
		ix.overflow[c].Store(new(overflowChunk))
	}
	ix.overflowCount.Store(n + 1)
	return n + 1, true
}
