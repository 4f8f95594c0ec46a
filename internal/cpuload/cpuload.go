// Package cpuload keeps this machine's CPUs busy for a given share of
// their time, so that a measurement of the disk alone can be repeated
// under the CPU load another measurement had.
//
// Why: on a virtual machine the disk's emulation may run on the host CPUs
// the guest's virtual CPUs run on, and then the disk is slower while the
// guest keeps its CPUs busy. On a two-CPU Firecracker guest, fio's p99 at a
// fixed rate of random reads grew many times over with both CPUs held
// partly busy, and more the busier they were
// (docs/notes/2026-12-07-comment-figures.md has the figures). A latency
// step of the server (its client and server both running) is held against
// fio alone and against fio with the CPUs as busy as the step's.
//
// Invariant: each holding thread keeps its busy time within one spin slice
// of share × its wall time since it began, whatever its sleeps oversleep
// by: it spins while behind and sleeps while ahead.
package cpuload

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinSlice is how long a holding thread spins before it looks at its
// share again; napSlice how long it asks to sleep when ahead (the Go
// runtime may sleep longer; the thread makes up for it by spinning).
const (
	spinSlice = 100 * time.Microsecond
	napSlice  = 200 * time.Microsecond
)

// Hold starts threads goroutines, each on an OS thread of its own, that
// keep busy for share (0 to 1) of the time until stop is called. stop
// waits for them and returns the seconds they spent spinning, all threads
// together. A share of 0 or less holds nothing; 1 or more spins throughout.
func Hold(share float64, threads int) (stop func() (busySeconds float64)) {
	var quit atomic.Bool
	var wg sync.WaitGroup
	var busyNs atomic.Int64
	if share > 0 {
		for range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				busyNs.Add(int64(hold(min(share, 1), &quit)))
			}()
		}
	}
	return func() float64 {
		quit.Store(true)
		wg.Wait()
		return time.Duration(busyNs.Load()).Seconds()
	}
}

// hold spins and sleeps until quit so that its spinning is share of its
// wall time; it returns the time it spun.
func hold(share float64, quit *atomic.Bool) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	var busy time.Duration
	for !quit.Load() {
		if float64(busy) >= share*float64(time.Since(start)) {
			time.Sleep(napSlice)
			continue
		}
		t0 := time.Now()
		for time.Since(t0) < spinSlice {
		}
		busy += time.Since(t0)
	}
	return busy
}
