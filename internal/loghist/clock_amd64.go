package loghist

import (
	"bytes"
	"math/bits"
	"os"
	"time"
)

// rdtsc reads the processor's time-stamp counter (clock_amd64.s).
func rdtsc() uint64

// tsc converts time-stamp counter ticks to Now's nanoseconds:
// Now = baseNanos + (ticks − baseTicks) × mult / 2³². It is set once, by
// init, and only where the kernel itself keeps time with the counter.
//
// Why: a server that times the stages of every GET (INFO latencystats)
// reads the clock four or five times per device GET. Through the vDSO
// (kvm-clock on a virtual machine) those readings were a large part of a
// tiered GET's benchmark time (BenchmarkDeviceGet); the counter read
// directly costs a fraction of a vDSO reading
// (docs/notes/2026-12-07-comment-figures.md has the figures).
//
// Invariants: the kernel uses the counter as its clocksource only when it
// runs at a constant rate and agrees across CPUs (it switches away when its
// watchdog finds otherwise), so readings taken on different CPUs can be
// subtracted. The rate is measured against the runtime's clock over
// calibrateFor; its error (the skew of one reading pair, ~40 ns, over that
// span) is below 0.01 %, far inside a histogram bucket's 6.25 %.
var tsc struct {
	on              bool
	baseTicks, mult uint64
	baseNanos       int64
}

// calibrateFor is how long init measures the counter's rate for.
const calibrateFor = 2 * time.Millisecond

func init() {
	b, err := os.ReadFile(clocksourcePath)
	if err != nil || !bytes.Equal(bytes.TrimSpace(b), []byte("tsc")) {
		return
	}
	n0, t0 := readingPair()
	time.Sleep(calibrateFor)
	n1, t1 := readingPair()
	if n1 <= n0 || t1 <= t0 {
		return
	}
	hi, lo := bits.Mul64(uint64(n1-n0), 1<<32) // (n1−n0) × 2³², 128 bits
	if hi >= t1-t0 {
		return // fewer ticks than nanoseconds × 2³²: not a counter to trust
	}
	mult, _ := bits.Div64(hi, lo, t1-t0)
	tsc.baseTicks, tsc.baseNanos, tsc.mult, tsc.on = t0, n0, mult, true
}

// readingPair reads the runtime's clock between two counter readings,
// three times, and keeps the tightest pair: the counter's value is then
// taken as the midpoint.
func readingPair() (nanos int64, ticks uint64) {
	best := ^uint64(0)
	for range 3 {
		a := rdtsc()
		n := sinceEpoch()
		b := rdtsc()
		if b >= a && b-a < best {
			best, nanos, ticks = b-a, n, a+(b-a)/2
		}
	}
	return nanos, ticks
}

// Now is a monotonic clock in nanoseconds, the same for every goroutine:
// stages timed on different goroutines can be subtracted.
func Now() int64 {
	if !tsc.on {
		return sinceEpoch()
	}
	d := rdtsc() - tsc.baseTicks
	if int64(d) < 0 {
		return tsc.baseNanos // another CPU's reading a hair behind the base
	}
	hi, lo := bits.Mul64(d, tsc.mult)
	return tsc.baseNanos + int64(hi<<32|lo>>32)
}

func tscOn() bool { return tsc.on }
