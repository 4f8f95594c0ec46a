//go:build linux

package freeze

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dataPages is each ring's data size in pages: 64 KiB with 4 KiB pages,
// 4 096 samples of 16 bytes, 4 s at a millisecond, against a drain every
// drainEvery.
const dataPages = 16

// drainEvery is how often the probe's goroutine empties the rings.
const drainEvery = 200 * time.Millisecond

// ring is one CPU's event and its mapped ring buffer.
type ring struct {
	cpu     int
	fd      int
	mem     []byte // the metadata page, then the data pages
	page    *unix.PerfEventMmapPage
	data    []byte
	gaps    cpuGaps
	scratch []byte // the unread bytes, unwrapped, when they wrap
}

// Probe samples every online CPU with the cpu-clock event (see the package
// comment) from Start until Stop.
type Probe struct {
	periodNs uint64
	rings    []*ring
	stats    Stats
	stop     chan struct{}
	done     chan struct{}
}

// Start opens a cpu-clock sampling event on every online CPU, one sample
// every period. It needs what perf record -a needs: kernel.perf_event_paranoid
// at 0 or below, or CAP_PERFMON (root has it).
func Start(period time.Duration) (*Probe, error) {
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	p := &Probe{periodNs: uint64(period), stop: make(chan struct{}), done: make(chan struct{})}
	p.stats.CPUs, p.stats.PeriodMicros = len(cpus), float64(period)/1e3
	for _, cpu := range cpus {
		r, err := openRing(cpu, p.periodNs)
		if err != nil {
			p.closeRings()
			return nil, err
		}
		p.rings = append(p.rings, r)
	}
	go p.run()
	return p, nil
}

func openRing(cpu int, periodNs uint64) (*ring, error) {
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Sample: periodNs, Sample_type: unix.PERF_SAMPLE_TIME}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("freeze: perf_event_open(cpu-clock) on CPU %d: %w (needs kernel.perf_event_paranoid ≤ 0 or CAP_PERFMON)", cpu, err)
		}
		return nil, fmt.Errorf("freeze: perf_event_open(cpu-clock) on CPU %d: %w", cpu, err)
	}
	pageBytes := os.Getpagesize()
	mem, err := unix.Mmap(fd, 0, (1+dataPages)*pageBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("freeze: mmap of CPU %d's sample ring: %w", cpu, err)
	}
	return &ring{cpu: cpu, fd: fd, mem: mem, page: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0])),
		data: mem[pageBytes:], scratch: make([]byte, 0, dataPages*pageBytes)}, nil
}

func (p *Probe) run() {
	defer close(p.done)
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.drain()
		}
	}
}

func (p *Probe) drain() {
	for _, r := range p.rings {
		r.drain(p.periodNs, &p.stats)
	}
}

// drain parses what the kernel wrote since the last drain and hands the
// space back.
func (r *ring) drain(periodNs uint64, s *Stats) {
	head := atomic.LoadUint64(&r.page.Data_head) // acquire: the records before head are written
	tail := r.page.Data_tail
	size := uint64(len(r.data))
	if head-tail > size { // cannot happen: the kernel does not pass the tail
		r.gaps.lost(0, s)
		atomic.StoreUint64(&r.page.Data_tail, head)
		return
	}
	avail := head - tail
	if avail == 0 {
		return
	}
	start := tail % size
	var b []byte
	if start+avail <= size {
		b = r.data[start : start+avail]
	} else { // the unread bytes wrap: unwrap them so a record is contiguous
		b = append(append(r.scratch[:0], r.data[start:]...), r.data[:start+avail-size]...)
	}
	n := parseRecords(b, periodNs, &r.gaps, s)
	if n == 0 && len(b) >= headerBytes { // a record we cannot read: skip it all
		n = len(b)
		r.gaps.lost(0, s)
	}
	atomic.StoreUint64(&r.page.Data_tail, tail+uint64(n)) // release: the kernel may reuse the space
}

// Stop ends the sampling and returns the freezes seen since Start.
func (p *Probe) Stop() Stats {
	close(p.stop)
	<-p.done
	p.drain()
	p.closeRings()
	return p.stats
}

func (p *Probe) closeRings() {
	for _, r := range p.rings {
		unix.Munmap(r.mem)
		unix.Close(r.fd)
	}
	p.rings = nil
}

// onlineCPUs reads /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("freeze: online CPUs: %w", err)
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("freeze: /sys/devices/system/cpu/online: %w", err)
	}
	return cpus, nil
}

// parseCPUList reads the kernel's CPU list format: ranges and numbers
// separated by commas.
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
