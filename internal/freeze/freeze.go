// Package freeze measures the times this machine's CPUs stood still: spans
// in which a virtual CPU ran nothing at all, not even the idle loop,
// because its host did not run it. The kernel counts a vCPU that was ready
// and not run as steal (package cpustat), but not one its host held back
// for a CPU quota (a cgroup's cpu.max running out, which stops every vCPU
// of the machine until the next period): on the 2-CPU test host that
// stopped the machine for milliseconds at the end of each quota period
// under a tiered server's load, with steal at 0, and it was the p99 of
// every latency step there.
//
// The measurement: the kernel's cpu-clock event samples each CPU every
// period, whatever runs on it, idle included (perf_event_open with
// pid -1); a sample comes from the CPU's own timer interrupt, so a gap
// between two samples well over the period is time the CPU did not run.
// A guest kernel that keeps interrupts off for milliseconds would look the
// same; Linux does not, outside of bugs.
//
// Invariants: a Probe owns one event and one ring per CPU, read only by
// its own goroutine until Stop; Stop returns what every ring held.
package freeze

import (
	"encoding/binary"
	"time"
)

// Stats are the freezes seen over a window, summed over the CPUs sampled.
type Stats struct {
	// CPUs is how many CPUs were sampled, every online one.
	CPUs int `json:"cpus"`
	// PeriodMicros is the sampling period: a gap of more than
	// gapPeriods of them counts as a freeze of its length less one.
	PeriodMicros float64 `json:"period_us"`
	// Count is the freezes; FrozenMillis their length summed over the
	// CPUs (a freeze of both CPUs counts twice); LongestMillis the
	// longest on any CPU.
	Count         int64   `json:"count"`
	FrozenMillis  float64 `json:"frozen_ms"`
	LongestMillis float64 `json:"longest_ms"`
	// Samples is the samples read; Lost those the kernel dropped because
	// a ring was full (their gaps are not counted).
	Samples int64 `json:"samples"`
	Lost    int64 `json:"lost"`
}

// FrozenShare is FrozenMillis as a share of the window's CPU time:
// seconds × CPUs.
func (s Stats) FrozenShare(seconds float64) float64 {
	if seconds <= 0 || s.CPUs == 0 {
		return 0
	}
	return s.FrozenMillis / 1e3 / (seconds * float64(s.CPUs))
}

// gapPeriods is how many periods two samples must be apart for the span
// between them to count: a timer interrupt a little late (a guest section
// with interrupts off, a VM exit) is not a freeze.
const gapPeriods = 2

// cpuGaps accounts one CPU's samples.
type cpuGaps struct {
	lastNs uint64 // the last sample's time; 0 before the first
}

// sample accounts a sample at timeNs into s.
func (g *cpuGaps) sample(timeNs uint64, periodNs uint64, s *Stats) {
	s.Samples++
	if g.lastNs != 0 && timeNs > g.lastNs {
		if gap := timeNs - g.lastNs; gap > gapPeriods*periodNs {
			frozen := time.Duration(gap - periodNs)
			s.Count++
			s.FrozenMillis += float64(frozen) / 1e6
			s.LongestMillis = max(s.LongestMillis, float64(frozen)/1e6)
		}
	}
	g.lastNs = timeNs
}

// lost forgets the last sample: the gap across dropped samples is unknown.
func (g *cpuGaps) lost(n uint64, s *Stats) {
	s.Lost += int64(n)
	g.lastNs = 0
}

// Record types and sizes of the perf ring (<linux/perf_event.h>): a header
// of type u32, misc u16, size u16; a sample with PERF_SAMPLE_TIME alone is
// the header and a u64 time; PERF_RECORD_LOST the header, an id and a
// count.
const (
	recordLost   = 2
	recordSample = 9
	headerBytes  = 8
)

// parseRecords reads the whole records in b (the bytes between a ring's
// tail and head, unwrapped), accounting samples and losses into g and s,
// and returns how many bytes it consumed. A record whose size is smaller
// than its header stops the parse: that is not a ring we understand.
func parseRecords(b []byte, periodNs uint64, g *cpuGaps, s *Stats) int {
	off := 0
	for len(b)-off >= headerBytes {
		typ := binary.NativeEndian.Uint32(b[off:])
		size := int(binary.NativeEndian.Uint16(b[off+6:]))
		if size < headerBytes || size > len(b)-off {
			break
		}
		body := b[off+headerBytes : off+size]
		switch {
		case typ == recordSample && len(body) >= 8:
			g.sample(binary.NativeEndian.Uint64(body), periodNs, s)
		case typ == recordLost && len(body) >= 16:
			g.lost(binary.NativeEndian.Uint64(body[8:]), s)
		}
		off += size
	}
	return off
}

// Window is a probe over a span of wall time asked one thing at its end:
// the frozen share. Where perf events are refused it reads nil, and the
// measurement it sits beside goes on without it.
type Window struct {
	probe *Probe
	start time.Time
}

// StartWindow starts a probe sampling every millisecond, the period the
// online client's own probe uses, so a window beside a latency step reads
// the same way as the step's.
func StartWindow() Window {
	p, err := Start(time.Millisecond)
	if err != nil {
		return Window{}
	}
	return Window{probe: p, start: time.Now()}
}

// End stops the probe and returns the share of the window's CPU time the
// CPUs stood still (Stats.FrozenShare); nil where the probe did not start.
func (w Window) End() *float64 {
	if w.probe == nil {
		return nil
	}
	st := w.probe.Stop()
	if st.CPUs == 0 {
		return nil
	}
	share := st.FrozenShare(time.Since(w.start).Seconds())
	return &share
}
