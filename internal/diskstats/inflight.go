package diskstats

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// ParseInFlight reads the two counters of a /sys/block/<disk>/inflight
// file, the requests the disk's driver holds now: reads, then writes.
//
// Why this file and not field 12 of /proc/diskstats: for a blk-mq disk
// inflight counts only what the driver has started (the ABI says it "can
// be less than the number of requests queued in the block device queue"),
// while diskstats counts the requests waiting in the I/O scheduler too.
// On the 2-CPU test VM (virtio, 128 tags, mq-deadline), under a loaded
// server, diskstats showed the scheduler's queue full (nr_requests) and
// this file what the ring holds: a virtio ring of 256 descriptors without
// indirect descriptors holds 85 three-descriptor reads, fewer than the
// tags the kernel gave it.
func ParseInFlight(data []byte) (reads, writes int, err error) {
	f := bytes.Fields(data)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%w: inflight has %d fields, want 2 (reads, writes)", ErrFormat, len(f))
	}
	r, err1 := strconv.ParseUint(string(f[0]), 10, 31)
	w, err2 := strconv.ParseUint(string(f[1]), 10, 31)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%w: inflight %q %q is not two counts", ErrFormat, clip(string(f[0])), clip(string(f[1])))
	}
	return int(r), int(w), nil
}

// DriverInFlight is the requests the named disks' drivers hold now,
// reads and writes of all of them together, from root's
// sys/block/<name>/inflight (root "/" for the host).
func DriverInFlight(root string, devices []string) (reads, writes int, err error) {
	for _, name := range devices {
		path := filepath.Join(root, "sys", "block", name, "inflight")
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, 0, fmt.Errorf("diskstats: %w", err)
		}
		r, w, err := ParseInFlight(data)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		reads, writes = reads+r, writes+w
	}
	return reads, writes, nil
}

// DriverWatch samples the reads of DriverInFlight on its own goroutine,
// from WatchDriver until Stop. Only that goroutine touches samples and
// failed until it closes done, after which only Stop reads them.
type DriverWatch struct {
	stop    chan struct{}
	done    chan struct{}
	samples []int
	failed  bool
}

// WatchDriver starts sampling the named disks every interval. A disk that
// cannot be read ends the sampling quietly: Stop then says nothing was
// read, so a missing figure is never a wrong one.
func WatchDriver(root string, devices []string, every time.Duration) *DriverWatch {
	w := &DriverWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			n, _, err := DriverInFlight(root, devices)
			if err != nil {
				w.failed = true
				return
			}
			if n > 0 {
				w.samples = append(w.samples, n)
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Stop ends the sampling and returns the reads the drivers held at or
// below in nine samples of ten that found any (the 90th percentile,
// nearest rank); ok is false when the disks could not be read or never
// held a read (then depth is 0). Samples without a read are left out:
// fio lays out its files before it reads them, and at the reference
// dataset's size that writing takes much of a step.
//
// Why not the most: blk-mq counts a request as the driver's from the
// moment it tries to hand it over, so a request the device had no room
// for is counted until it is put back: on the test VM, whose virtio ring
// holds 85 reads, a few samples read more than the ring can hold.
func (w *DriverWatch) Stop() (depth int, ok bool) {
	close(w.stop)
	<-w.done
	if w.failed || len(w.samples) == 0 {
		return 0, false
	}
	slices.Sort(w.samples)
	return w.samples[(len(w.samples)*9+9)/10-1], true
}
