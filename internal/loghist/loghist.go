// Package loghist is a fixed-size, lock-free latency histogram cheap enough
// to stay on in a server's hot path: recording is one atomic add and no
// allocation, and readers merge histograms into a Snapshot whenever they
// like, while writers go on.
//
// Buckets are log-linear: every power of two of nanoseconds is cut into
// SubBuckets equal parts, so a bucket is at most 1/SubBuckets of its
// value wide, and a quantile read from its midpoint is within half that
// (6.25 %) of the recorded value. Values from 0 to 2^MaxShift ns (about
// 18 minutes) are kept; longer ones count in the last bucket.
package loghist

import (
	"math/bits"
	"sync/atomic"
)

const (
	subBits = 3
	// SubBuckets is how many buckets share each power of two.
	SubBuckets = 1 << subBits
	// MaxShift: values of 2^MaxShift ns and over share the last bucket.
	MaxShift = 40
	// Buckets is the number of buckets of a histogram.
	Buckets = (MaxShift - subBits + 1) * SubBuckets
)

// bucket is the index of the bucket that counts v nanoseconds.
func bucket(v int64) int {
	if v < SubBuckets {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	if v >= 1<<MaxShift {
		return Buckets - 1
	}
	shift := bits.Len64(uint64(v)) - 1 - subBits // >= 0
	return (shift+1)*SubBuckets + int(uint64(v)>>shift)&(SubBuckets-1)
}

// bounds is the range of values [low, high) that bucket i counts.
func bounds(i int) (low, high int64) {
	if i < SubBuckets {
		return int64(i), int64(i) + 1
	}
	shift := i/SubBuckets - 1
	low = int64(SubBuckets+i%SubBuckets) << shift
	return low, low + 1<<shift
}

// Hist is one histogram. Its zero value is empty and ready; it must not be
// copied once used. Record and Snapshot may run concurrently.
//
// It keeps no sum: a second atomic add per value, on a line every recorder
// shares, for a mean no reader asked for (a server's GET recorded five
// stages, ten locked adds, per device read).
type Hist struct {
	counts [Buckets]atomic.Uint64
}

// Record counts one value of ns nanoseconds (a negative one as 0).
func (h *Hist) Record(ns int64) {
	h.counts[bucket(ns)].Add(1)
}

// Reset empties h. Values recorded during Reset may be kept or dropped.
func (h *Hist) Reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
}

// AddTo adds h's counts to s.
func (h *Hist) AddTo(s *Snapshot) {
	for i := range h.counts {
		if n := h.counts[i].Load(); n != 0 {
			s.Counts[i] += n
			s.Count += n
		}
	}
}

// Snapshot is histograms merged at one moment, for reading.
type Snapshot struct {
	Counts [Buckets]uint64
	Count  uint64
}

// Quantile is the value at quantile q (0 to 1) in nanoseconds: the
// midpoint of the bucket holding it, 0 when s is empty.
func (s *Snapshot) Quantile(q float64) int64 {
	if s.Count == 0 {
		return 0
	}
	rank := uint64(q*float64(s.Count) + 0.5)
	rank = min(max(rank, 1), s.Count)
	var seen uint64
	for i, n := range s.Counts {
		seen += n
		if seen >= rank {
			low, high := bounds(i)
			return (low + high - 1) / 2
		}
	}
	return 0 // unreachable: the counts add up to Count
}

// Max is the upper bound of the highest non-empty bucket, 0 when empty.
func (s *Snapshot) Max() int64 {
	for i := Buckets - 1; i >= 0; i-- {
		if s.Counts[i] != 0 {
			_, high := bounds(i)
			return high - 1
		}
	}
	return 0
}
