// Package cpustat reads the kernel's CPU time counters from /proc/stat and
// turns two samples into the share of the CPU time that the hypervisor
// took from this machine (steal): time a virtual CPU was ready to run but
// its host ran something else. A run whose steal is not zero had stalls
// that neither the server nor the client made, and a latency tail there
// is partly the host's; tierbench samples steal around every measured
// phase so that the report can say so. The same two samples give the
// share of the time this machine's CPUs were busy (neither idle nor
// stolen), which on some hosts slows the disk itself: a virtual disk
// whose emulation needs the CPUs the guest keeps busy.
//
// The first line of /proc/stat, "cpu" followed by at least four numbers,
// is the sum over every CPU in USER_HZ ticks (proc(5)): user, nice,
// system, idle, iowait (2.5.41), irq and softirq (2.6.0), steal
// (2.6.11), guest (2.6.24) and guest_nice (2.6.33). guest and guest_nice
// are already counted in user and nice, so the total is the first eight.
// A kernel that prints no steal column has none to report (HasSteal).
package cpustat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoCPULine is returned by Parse for a /proc/stat without its "cpu"
// line.
var ErrNoCPULine = errors.New("cpustat: no cpu line in /proc/stat")

// NoticeableSteal is the steal share from which a phase's stalls are named
// partly the host's: 0.5 % is 5 ms of every second of one CPU, a stall long
// enough to reach the p99 of a phase of thousands of requests a second.
const NoticeableSteal = 0.005

// Sample is the "cpu" line of /proc/stat: every CPU's time together, in
// USER_HZ ticks; PerCPU holds the "cpuN" lines the same way.
type Sample struct {
	// TotalTicks is user + nice + system + idle + iowait + irq + softirq
	// + steal: every tick of every CPU, whoever had it.
	TotalTicks uint64 `json:"total_ticks"`
	// StealTicks is the steal column; zero without one.
	StealTicks uint64 `json:"steal_ticks"`
	// IdleTicks is idle + iowait: time no task of this machine ran.
	IdleTicks uint64 `json:"idle_ticks"`
	// HasSteal: the kernel printed a steal column (2.6.11 and later).
	HasSteal bool `json:"has_steal"`
	// PerCPU maps a CPU's number to its own line's counters (their
	// PerCPU empty); a CPU that is offline has no line.
	PerCPU map[int]Sample `json:"per_cpu,omitempty"`
}

// Over is the sample of the CPUs in cpus alone, summed; an error names a
// CPU without a line.
func (s Sample) Over(cpus []int) (Sample, error) {
	sum := Sample{HasSteal: len(cpus) > 0}
	for _, c := range cpus {
		one, ok := s.PerCPU[c]
		if !ok {
			return Sample{}, fmt.Errorf("cpustat: no line for CPU %d in /proc/stat", c)
		}
		sum.TotalTicks += one.TotalTicks
		sum.StealTicks += one.StealTicks
		sum.IdleTicks += one.IdleTicks
		sum.HasSteal = sum.HasSteal && one.HasSteal
	}
	return sum, nil
}

// Parse reads the "cpu" and "cpuN" lines of a /proc/stat. A malformed
// line is an error naming what was wrong.
func Parse(data []byte) (Sample, error) {
	var all Sample
	found := false
	per := map[int]Sample{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		s, err := parseLine(f)
		if err != nil {
			return Sample{}, err
		}
		if f[0] == "cpu" {
			all, found = s, true
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || n < 0 {
			return Sample{}, fmt.Errorf("cpustat: line %q is neither cpu nor cpuN", f[0])
		}
		per[n] = s
	}
	if err := sc.Err(); err != nil {
		return Sample{}, fmt.Errorf("cpustat: %w", err)
	}
	if !found {
		return Sample{}, ErrNoCPULine
	}
	if len(per) > 0 {
		all.PerCPU = per
	}
	return all, nil
}

// parseLine reads the counters of one cpu line, its name first.
func parseLine(f []string) (Sample, error) {
	if len(f) < 5 {
		return Sample{}, fmt.Errorf("cpustat: %s line has %d counters, want at least 4 (user nice system idle)", f[0], len(f)-1)
	}
	var s Sample
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Sample{}, fmt.Errorf("cpustat: %s line counter %d: %w", f[0], i+1, err)
		}
		var carry uint64
		if s.TotalTicks, carry = bits.Add64(s.TotalTicks, n, 0); carry != 0 {
			return Sample{}, fmt.Errorf("cpustat: %s line counters overflow 64 bits at counter %d", f[0], i+1)
		}
		switch i {
		case 3, 4:
			s.IdleTicks += n
		case 7:
			s.StealTicks, s.HasSteal = n, true
		}
	}
	return s, nil
}

// Read reads <root>/proc/stat; root is "/" but in tests.
func Read(root string) (Sample, error) {
	data, err := os.ReadFile(filepath.Join(root, "proc", "stat"))
	if err != nil {
		return Sample{}, fmt.Errorf("cpustat: %w", err)
	}
	return Parse(data)
}

// StealShare is the share of the CPU time between before and s that was
// stolen, from 0 to 1. It is an error when the kernel prints no steal
// column, when no tick passed between the samples (they are less than a
// tick apart: too short to say), or when a counter went backwards (the
// samples are of different machines, or in the wrong order).
func (s Sample) StealShare(before Sample) (float64, error) {
	switch {
	case !s.HasSteal || !before.HasSteal:
		return 0, errors.New("cpustat: this kernel's /proc/stat has no steal column")
	case s.TotalTicks < before.TotalTicks || s.StealTicks < before.StealTicks:
		return 0, fmt.Errorf("cpustat: CPU ticks went backwards (total %d then %d, steal %d then %d)", before.TotalTicks, s.TotalTicks, before.StealTicks, s.StealTicks)
	case s.TotalTicks == before.TotalTicks:
		return 0, errors.New("cpustat: no CPU tick passed between the samples")
	}
	return float64(s.StealTicks-before.StealTicks) / float64(s.TotalTicks-before.TotalTicks), nil
}

// BusyShare is the share of the CPU time between before and s in which
// this machine ran something (user, system, interrupts: neither idle,
// iowait nor stolen), from 0 to 1. Errors as StealShare's, but for the
// steal column, which it does not need.
func (s Sample) BusyShare(before Sample) (float64, error) {
	switch {
	case s.TotalTicks < before.TotalTicks || s.IdleTicks < before.IdleTicks || s.StealTicks < before.StealTicks:
		return 0, fmt.Errorf("cpustat: CPU ticks went backwards (total %d then %d, idle %d then %d)", before.TotalTicks, s.TotalTicks, before.IdleTicks, s.IdleTicks)
	case s.TotalTicks == before.TotalTicks:
		return 0, errors.New("cpustat: no CPU tick passed between the samples")
	}
	total := s.TotalTicks - before.TotalTicks
	idle := (s.IdleTicks - before.IdleTicks) + (s.StealTicks - before.StealTicks)
	if idle > total {
		return 0, fmt.Errorf("cpustat: idle and steal ticks (%d) exceed every tick (%d) between the samples", idle, total)
	}
	return float64(total-idle) / float64(total), nil
}

// Watch is a /proc/stat read as a phase begins, so that its end can say
// how much CPU time the hypervisor took in it, and how busy the machine
// was.
type Watch struct {
	root   string
	before Sample
	err    error
}

// StartWatch reads <root>/proc/stat now.
func StartWatch(root string) Watch {
	s, err := Read(root)
	return Watch{root, s, err}
}

// StealShare is the steal share since StartWatch, every CPU's; nil when
// it cannot be told (see Between).
func (w Watch) StealShare() *float64 { return w.End().Steal }

// Window is what a Watch saw, every CPU's; a share is nil where it cannot
// be told.
type Window struct {
	Steal *float64 // the hypervisor's share (Between)
	Busy  *float64 // this machine's own busy share (Sample.BusyShare)
}

// End reads /proc/stat once more and gives the shares since StartWatch.
func (w Watch) End() Window {
	if w.err != nil {
		return Window{}
	}
	after, err := Read(w.root)
	if err != nil {
		return Window{}
	}
	win := Window{Steal: Between(w.before, after, nil)}
	if b, err := after.BusyShare(w.before); err == nil {
		win.Busy = &b
	}
	return win
}

// Between is the steal share of the CPUs in cpus (every CPU's when cpus
// is nil) from before to after; nil when it cannot be told (no steal
// column, a CPU without a line, a phase under one tick): a measurement
// goes on without it.
func Between(before, after Sample, cpus []int) *float64 {
	if cpus != nil {
		var err error
		if before, err = before.Over(cpus); err != nil {
			return nil
		}
		if after, err = after.Over(cpus); err != nil {
			return nil
		}
	}
	s, err := after.StealShare(before)
	if err != nil {
		return nil
	}
	return &s
}
