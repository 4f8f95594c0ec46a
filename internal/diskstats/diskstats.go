// Package diskstats reads the kernel's per-disk I/O counters from
// /proc/diskstats and turns two samples into what iostat prints: completed
// reads per second (r/s) and the time-weighted number of requests in
// flight (aqu-sz). tierbench samples the data disk around every measured
// GET phase, so a cell's ops/s can be set beside the reads the disk really
// completed and the depth it really saw.
//
// Counting the major number as field 1 (Documentation/admin-guide/iostats.rst):
// field 4 is reads completed, 6 sectors read (512 B units), 7 ms spent
// reading, 12 I/Os in flight, 13 ms doing I/O and 14 the weighted ms doing
// I/O (each ms counted once per request in flight). Kernels before 4.18
// print 14 fields, later ones add discard and flush counters; Parse needs
// the first 14 and ignores the rest. A sample of several disks (the members
// of an md or dm array) sums their counters: the reads and the depth of the
// array are those of its members together.
package diskstats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stat is one line of /proc/diskstats.
type Stat struct {
	Major, Minor   uint32
	Name           string
	ReadsCompleted uint64 // field 4
	SectorsRead    uint64 // field 6, 512 B units whatever the block size
	ReadMs         uint64 // field 7
	InFlight       uint64 // field 12, a gauge: requests in flight now
	IOMs           uint64 // field 13, wall ms with at least one request in flight
	WeightedMs     uint64 // field 14, ms × requests in flight
}

// ErrFormat marks bytes that are not /proc/diskstats.
var ErrFormat = errors.New("diskstats: not /proc/diskstats")

// minFields is the line length of the oldest format: major, minor, name
// and 11 counters.
const minFields = 14

// Parse reads /proc/diskstats. Blank lines are skipped; any other line
// that does not have a device number, a name and at least 11 counters is
// an error naming its line number.
func Parse(data []byte) ([]Stat, error) {
	var out []Stat
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < minFields {
			return nil, fmt.Errorf("%w: line %d has %d fields, want at least %d", ErrFormat, line, len(f), minFields)
		}
		var s Stat
		maj, err1 := strconv.ParseUint(f[0], 10, 32)
		min, err2 := strconv.ParseUint(f[1], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: line %d: device number %q:%q is not two integers", ErrFormat, line, clip(f[0]), clip(f[1]))
		}
		s.Major, s.Minor, s.Name = uint32(maj), uint32(min), f[2]
		for i, dst := range []*uint64{&s.ReadsCompleted, nil, &s.SectorsRead, &s.ReadMs, nil, nil, nil, nil, &s.InFlight, &s.IOMs, &s.WeightedMs} {
			v, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d (%s): field %d %q is not a counter", ErrFormat, line, clip(s.Name), 4+i, clip(f[3+i]))
			}
			if dst != nil {
				*dst = v
			}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Sample is the summed counters of some disks at one moment.
type Sample struct {
	Time           time.Time
	Devices        []string
	ReadsCompleted uint64
	SectorsRead    uint64
	WeightedMs     uint64
	IOMs           uint64
}

// Read samples the named disks from root's proc/diskstats (root "/" for
// the host; tests point it at a fake tree). Every name must have a line.
func Read(root string, devices []string) (Sample, error) {
	path := filepath.Join(root, "proc", "diskstats")
	data, err := os.ReadFile(path)
	if err != nil {
		return Sample{}, fmt.Errorf("diskstats: %w", err)
	}
	stats, err := Parse(data)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w", path, err)
	}
	return Sum(stats, devices, time.Now())
}

// Sum adds up the counters of the named disks, as one sample taken at t.
func Sum(stats []Stat, devices []string, t time.Time) (Sample, error) {
	if len(devices) == 0 {
		return Sample{}, errors.New("diskstats: no disks to sample")
	}
	s := Sample{Time: t, Devices: devices}
	for _, name := range devices {
		found := false
		for _, st := range stats {
			if st.Name == name {
				s.ReadsCompleted += st.ReadsCompleted
				s.SectorsRead += st.SectorsRead
				s.WeightedMs += st.WeightedMs
				s.IOMs += st.IOMs
				found = true
				break
			}
		}
		if !found {
			return Sample{}, fmt.Errorf("diskstats: no line for disk %q", name)
		}
	}
	return s, nil
}

// Delta is what happened on the disks between two samples.
type Delta struct {
	Seconds        float64 // wall time between the samples
	ReadsCompleted uint64
	SectorsRead    uint64
	WeightedMs     uint64
	IOMs           uint64
}

// ErrBackwards marks a later sample with smaller counters than an earlier
// one: a different set of disks, a counter that wrapped, or a disk that
// was removed and added again.
var ErrBackwards = errors.New("diskstats: counters went backwards")

// Since returns the change from earlier to s.
func (s Sample) Since(earlier Sample) (Delta, error) {
	if s.ReadsCompleted < earlier.ReadsCompleted || s.SectorsRead < earlier.SectorsRead ||
		s.WeightedMs < earlier.WeightedMs || s.IOMs < earlier.IOMs {
		return Delta{}, fmt.Errorf("%w on %s between %s and %s", ErrBackwards, strings.Join(s.Devices, "+"),
			earlier.Time.Format(time.RFC3339Nano), s.Time.Format(time.RFC3339Nano))
	}
	return Delta{
		Seconds:        s.Time.Sub(earlier.Time).Seconds(),
		ReadsCompleted: s.ReadsCompleted - earlier.ReadsCompleted,
		SectorsRead:    s.SectorsRead - earlier.SectorsRead,
		WeightedMs:     s.WeightedMs - earlier.WeightedMs,
		IOMs:           s.IOMs - earlier.IOMs,
	}, nil
}

// ReadsPerSec is iostat's r/s over seconds of activity (0 for none).
func (d Delta) ReadsPerSec(seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(d.ReadsCompleted) / seconds
}

// QueueDepth is iostat's aqu-sz over seconds: the average number of
// requests in flight, reads and writes together (0 for no time).
func (d Delta) QueueDepth(seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(d.WeightedMs) / (1000 * seconds)
}
